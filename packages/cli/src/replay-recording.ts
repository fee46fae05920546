import {
  type Chunk,
  OpenRathError,
  type ProviderRequest,
  type ProviderV1,
  ReplayProvider,
  type RunEvent,
  Session,
} from "@openrath/core";
import { readRecording } from "./recording.js";
import { type ReplayableWorkflow, replayableWorkflows } from "./replayable-workflows.js";

/** Options of {@link replayRecording}. */
export interface ReplayRecordingOptions {
  /** The workflow to re-run, overriding the recording's manifest (required when it has none). */
  readonly workflow?: string;
  /** Every event of the re-run, for progress. */
  readonly onEvent?: (event: RunEvent) => void;
  /** The workflows to choose from (default: {@link replayableWorkflows}). */
  readonly workflows?: Readonly<Record<string, ReplayableWorkflow>>;
}

/** Where a replay first departed from its recording. */
export interface ReplayDivergence {
  /**
   * - `replay_miss`: a model request the recording has no answer for;
   * - `calls_left`: the run ended before making every recorded call;
   * - `output_differs`: every call matched but the final transcript differs.
   */
  readonly kind: "replay_miss" | "calls_left" | "output_differs";
  /** The model call (1-based, in the order the re-run made them) that diverged, for `replay_miss`. */
  readonly call?: number;
  /** The agent or step that made the diverging call, when it can be told. */
  readonly agent?: string;
  /** One line saying what diverged, for people. */
  readonly message: string;
}

/** The outcome of {@link replayRecording}. */
export interface ReplayReport {
  /** The workflow that was re-run. */
  readonly workflow: string;
  /** Model calls answered from the recording. */
  readonly calls: number;
  /** Model calls the recording holds. */
  readonly recordedCalls: number;
  /** Whether the re-run made exactly the recorded calls and reproduced the final transcript. */
  readonly identical: boolean;
  /** The first divergence, when not identical. */
  readonly divergence?: ReplayDivergence;
  /** The re-run's final session, when it finished. */
  readonly session?: Session;
}

/** A chunk without its identity (ids, times, branch): what must match between a run and its replay. */
function comparable(chunk: Chunk): string {
  const c = chunk as unknown as Record<string, unknown>;
  return JSON.stringify([
    c.kind,
    c.author ?? null,
    c.content ?? null,
    c.name ?? null,
    (c.toolCalls as unknown[] | undefined) ?? null,
    c.isError ?? null,
  ]);
}

/** The first line (up to 80 characters) of a request's instructions, to tell which step made it. */
function instructionsOf(request: ProviderRequest | undefined): string | undefined {
  const first = request?.messages[0];
  if (first?.role !== "system" || typeof first.content !== "string") return undefined;
  const line = first.content.split("\n", 1)[0]!.trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = error; e !== undefined && e !== null && chain.length < 10; e = (e as Error).cause)
    chain.push(e);
  return chain;
}

/**
 * Re-runs a recorded workflow with every model call answered by a {@link ReplayProvider} built from
 * the recording, and reports whether the run was identical or where it first diverged. The
 * recording is a directory written by `openrath demo --record` (its `recording.json` names the
 * workflow and its input) or a single session log with `options.workflow`.
 *
 * @throws {OpenRathError} `unknown_workflow` when the workflow is not one the CLI can re-run;
 *   `recording_unknown_workflow` when the recording does not say and none is given; read errors
 *   from {@link readRecording}.
 */
export async function replayRecording(
  path: string,
  options: ReplayRecordingOptions = {},
): Promise<ReplayReport> {
  const recording = await readRecording(path);
  const workflows = options.workflows ?? replayableWorkflows;
  const name = options.workflow ?? recording.manifest?.workflow;
  const known = Object.keys(workflows).join(", ");
  if (name === undefined) {
    throw new OpenRathError(
      "recording_unknown_workflow",
      `${recording.dir} has no recording.json naming the workflow that made it; pass --workflow <name> (one of: ${known}).`,
      { details: { path: recording.dir } },
    );
  }
  const workflow = workflows[name];
  if (!workflow) {
    throw new OpenRathError(
      "unknown_workflow",
      `Unknown workflow ${JSON.stringify(name)}; this CLI can replay: ${known}.`,
      { details: { workflow: name, known: Object.keys(workflows) } },
    );
  }
  const replay = ReplayProvider.from(...recording.sessions);
  const recordedCalls = replay.remaining;
  const requests: ProviderRequest[] = [];
  // Keeps each request so a miss outside an agent (a compressor, a selector) can still be placed.
  const provider: ProviderV1 = {
    specVersion: "v1",
    name: replay.name,
    model: replay.model,
    complete: (request, callOptions) => {
      requests.push(request);
      return replay.complete(request, callOptions);
    },
    stream: (request, callOptions) => {
      requests.push(request);
      return replay.stream(request, callOptions);
    },
  };
  const input = Session.fromUserMessage(recording.manifest?.input ?? workflow.defaultInput, {
    author: "user",
  });
  let session: Session;
  try {
    session = await workflow.run(input, provider, options.onEvent ? { onEvent: options.onEvent } : {});
  } catch (error) {
    const chain = causes(error);
    const miss = chain.find((e) => OpenRathError.isInstance(e, "replay_miss")) as OpenRathError | undefined;
    if (!miss) throw error;
    const call = typeof miss.details.call === "number" ? miss.details.call : undefined;
    const agentError = chain.find((e) => OpenRathError.isInstance(e, "agent_failed")) as
      | (OpenRathError & { session?: Session })
      | undefined;
    const author = agentError?.session?.chunks.at(-1)?.author;
    const named = /Agent "([^"]+)"/.exec(agentError?.message ?? "")?.[1];
    const step = instructionsOf(call !== undefined ? requests[call - 1] : undefined);
    const agent = author ?? named ?? (step ? `the step instructed "${step}"` : undefined);
    return {
      workflow: name,
      calls: replay.servedCount,
      recordedCalls,
      identical: false,
      divergence: {
        kind: "replay_miss",
        ...(call !== undefined ? { call } : {}),
        ...(agent !== undefined ? { agent } : {}),
        message: `Replay diverged at model call ${call ?? "?"}${agent ? ` (${agent})` : ""}: ${miss.message.replace(/^Replay diverged at model call \d+: /, "")}`,
      },
    };
  }
  const base = { workflow: name, calls: replay.servedCount, recordedCalls, session };
  if (replay.remaining > 0) {
    return {
      ...base,
      identical: false,
      divergence: {
        kind: "calls_left",
        message: `The re-run finished after ${replay.servedCount} model call(s), but the recording holds ${recordedCalls}: ${replay.remaining} recorded call(s) were never made.`,
      },
    };
  }
  const recorded =
    recording.sessions.find((s) => s.id === recording.manifest?.finalSessionId) ??
    (recording.manifest ? undefined : recording.sessions.at(-1));
  if (recorded) {
    const want = recorded.chunks.map(comparable);
    const got = session.chunks.map(comparable);
    const at = want.findIndex((c, i) => c !== got[i]);
    const index = at >= 0 ? at : want.length !== got.length ? Math.min(want.length, got.length) : -1;
    if (index >= 0) {
      return {
        ...base,
        identical: false,
        divergence: {
          kind: "output_differs",
          message: `Every model call matched, but the final transcript differs from the recorded one at chunk ${index} (recorded ${want.length} chunks, replayed ${got.length}).`,
        },
      };
    }
  }
  return { ...base, identical: true };
}
