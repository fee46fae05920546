import {
  closeAllSandboxes,
  formatUsageTable,
  lineageToText,
  type PriceTable,
  type ProviderV1,
  ReplayProvider,
  type RunEvent,
  RunRecorder,
  Session,
  usageReport,
} from "@openrath/core";
import { MamsWorkflow, scriptedBrain, TASK } from "@openrath/demo";
import { ensureLocalSandbox } from "../internal/ensure-local-sandbox.js";
import { readRecording, writeRecording } from "../recording.js";

/** Illustrative prices (USD per million tokens) for the real-model run. */
const PRICES: PriceTable = { "gpt-4o-mini": { input: 0.15, output: 0.6, cachedInput: 0.075 } };

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** The model; default: the scripted brain (no API key needed). */
  readonly provider?: ProviderV1;
  /**
   * Write every session of the run as a session log into this directory, with a `recording.json`
   * manifest, for `openrath replay` and `openrath lineage`. A previous recording there is replaced.
   */
  readonly record?: string;
  /** Answer every model call from the recording in this directory (or log file) instead of a model. */
  readonly replay?: string;
  /** Progress lines such as `▶ mams` and `  wordsmith → run_shell_command` (default: none). */
  readonly log?: (line: string) => void;
  /** Every event of the run, for callers that show their own progress. */
  readonly onEvent?: (event: RunEvent) => void;
  /** Stops the run: the model call or tool in flight is cancelled and the sandboxes are closed. */
  readonly signal?: AbortSignal;
}

/** What one demo run produced. */
export interface DemoResult {
  /** The printed report: lineage, usage table and answer. Deterministic for the scripted brain and replays. */
  readonly output: string;
  /** The final session (the writer's answer, wrapped by the workflow). */
  readonly session: Session;
  /** Every session the run produced, the input first, each in its longest version. */
  readonly sessions: readonly Session[];
  /** The provider that answered the model calls (a `ReplayProvider` for replays). */
  readonly provider: ProviderV1;
  /** The session log files written by `record`, if any. */
  readonly logs: readonly string[];
}

/**
 * Runs the MAMS demo (`MamsWorkflow` from `@openrath/demo`) and returns its printed report. Deterministic for
 * the scripted brain and for replays, so a replay's output equals the recorded run's.
 *
 * @example
 * ```ts
 * const { output } = await runDemo({ record: "./recording" });
 * const again = await runDemo({ replay: "./recording" }); // no model calls
 * console.log(again.output === output); // true
 * ```
 */
export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  ensureLocalSandbox();
  const provider = options.replay
    ? ReplayProvider.from(...(await readRecording(options.replay)).sessions)
    : (options.provider ?? scriptedBrain());
  const flow = new MamsWorkflow(provider);
  const recorder = new RunRecorder((event: RunEvent) => {
    options.onEvent?.(event);
    if (event.type === "tool_start") options.log?.(`  ${event.agent} → ${event.name}`);
    if (event.type === "workflow_start") options.log?.(`▶ ${event.path}`);
  });
  const input = Session.fromUserMessage(TASK, { author: "user" });
  recorder.add(input);
  let session: Session;
  try {
    session = await flow.run(input, {
      onEvent: recorder.onEvent,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } finally {
    await closeAllSandboxes();
  }
  const sessions = recorder.sessions();
  const logs = options.record
    ? await writeRecording(options.record, sessions, {
        workflow: "mams",
        input: TASK,
        finalSessionId: session.id,
        provider: provider.name,
      })
    : [];
  return { output: demoReport(session, provider.name), session, sessions, provider, logs };
}

/** The demo's report of a finished session: the task, its lineage, usage by agent and model, the answer. */
export function demoReport(session: Session, providerName: string): string {
  const report = usageReport(session.chunks, providerName === "openai" ? { prices: PRICES } : {});
  return [
    "OpenRath MAMS demo: a planner, three specialists on one local sandbox, a three-way merge, compression and a router",
    "",
    `Task: ${TASK}`,
    "",
    "Lineage:",
    lineageToText(session).trimEnd(),
    "",
    "Usage by agent and model:",
    formatUsageTable(report).trimEnd(),
    "",
    `Answer: ${session.text() ?? "(no answer)"}`,
    "",
  ].join("\n");
}
