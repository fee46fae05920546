import { BRANCH_EXTRA, type CallPosition, REQUEST_EXTRA } from "./call-position.js";
import { type Chunk, chunkToMessage, type Message } from "./chunk.js";
import type { LineageNode } from "./lineage.js";
import {
  type ProviderCallOptions,
  type ProviderDelta,
  ProviderError,
  type ProviderRequest,
  type ProviderResponse,
  type ProviderV1,
} from "./provider.js";
import {
  type RecordedRequest,
  type RequestDigest,
  requestDifferences,
  requestFingerprint,
} from "./request-fingerprint.js";
import type { Usage } from "./usage.js";

/** Anything holding recorded chunks: sessions (best: their lineage tells each call's branch), or plain chunk arrays. */
export type Recording =
  | { readonly chunks: readonly Chunk[]; readonly lineage?: LineageNode; readonly id?: string }
  | readonly Chunk[];

/** One recorded model call: the request's fingerprint and the normalized answer. */
export interface RecordedCall {
  readonly requestHash: string;
  readonly response: ProviderResponse;
  /** Who made the call, for divergence messages. */
  readonly author?: string;
  /** When, to keep calls of one branch (or without a branch) in order. */
  readonly createdAt: number;
  /** The key of the branch that made the call, when the recording tells it. */
  readonly branch?: string;
  /** What the recording can rebuild of the request, for divergence messages. */
  readonly request?: () => RecordedRequest;
}

/**
 * The model calls a chunk records: an agent's assistant turn, a compressor's summary, or a
 * selector's decision. `node` is the lineage node of the session that wrote the chunk, when known.
 */
export function recordedCall(chunk: Chunk, node?: LineageNode): RecordedCall | undefined {
  const branch = node?.extras[BRANCH_EXTRA];
  const digest = node?.extras[REQUEST_EXTRA] as RequestDigest | undefined;
  const base = {
    createdAt: chunk.createdAt,
    ...(chunk.author !== undefined ? { author: chunk.author } : {}),
    ...(typeof branch === "string" ? { branch } : {}),
    ...(digest ? { request: () => ({ digest }) } : {}),
  };
  const usage = (u: unknown) => (u ? { usage: u as Usage } : {});
  if (chunk.kind === "assistant" && chunk.requestHash) {
    const toolCalls = chunk.toolCalls ?? [];
    return {
      ...base,
      requestHash: chunk.requestHash,
      response: {
        content: chunk.content,
        toolCalls,
        finishReason:
          (chunk.finishReason as ProviderResponse["finishReason"]) ??
          (toolCalls.length > 0 ? "tool_calls" : "stop"),
        model: chunk.model ?? "replay",
        ...usage(chunk.usage),
        ...(chunk.reasoning && chunk.reasoning.length > 0 ? { reasoning: chunk.reasoning } : {}),
      },
    };
  }
  if (chunk.kind === "user" && chunk.requestHash) {
    return {
      ...base,
      requestHash: chunk.requestHash,
      response: {
        content: chunk.content,
        toolCalls: [],
        finishReason: "stop",
        model: chunk.model ?? "replay",
        ...usage(chunk.usage),
      },
    };
  }
  if (chunk.kind === "event" && chunk.name === "selector.decision") {
    const data = chunk.data as {
      requestHash?: string;
      reply?: string | null;
      model?: string;
      usage?: Usage;
      branch?: string;
      request?: RequestDigest;
    } | null;
    if (!data?.requestHash) return undefined;
    return {
      createdAt: chunk.createdAt,
      ...(chunk.author !== undefined ? { author: chunk.author } : {}),
      ...(typeof data.branch === "string" ? { branch: data.branch } : {}),
      ...(data.request ? { request: () => ({ digest: data.request! }) } : {}),
      requestHash: data.requestHash,
      response: {
        content: data.reply ?? null,
        toolCalls: [],
        finishReason: "stop",
        model: data.model ?? "replay",
        ...usage(data.usage),
      },
    };
  }
  return undefined;
}

/** Every lineage node reachable from `node`, by id. */
function nodesOf(node: LineageNode, into: Map<string, LineageNode>): void {
  const stack = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (into.has(n.id)) continue;
    into.set(n.id, n);
    for (let i = 0; i < n.parentCount; i++) stack.push(n.parentAt(i)!);
  }
}

interface Entry {
  readonly call: RecordedCall;
  served: boolean;
}

/**
 * Answers model requests from a recorded run instead of calling a model. Each assistant chunk an
 * agent writes carries the fingerprint of the request that produced it (`requestHash`), and the
 * agent's lineage node the key of its branch; on replay the same request on the same branch gets
 * the same answer, with zero provider calls. Parallel branches that send identical requests get
 * their own branch's answers whatever order they run in. A request on a branch the recording does
 * not know is answered by fingerprint alone, in recorded order. A request the recording has no
 * answer for fails closed with `replay_miss`, naming the branch, the call and what differs from
 * the call the recording expected there (which message, tool or parameter).
 *
 * @example
 * ```ts
 * const recorder = new RunRecorder();
 * const recorded = await flow.run(question, { onEvent: recorder.onEvent });
 * const replay = ReplayProvider.from(...recorder.sessions());
 * const again = await flowWith(replay).run(question);            // same transcript, no model calls
 * ```
 */
export class ReplayProvider implements ProviderV1 {
  readonly specVersion = "v1" as const;
  readonly name = "replay";
  readonly model: string;
  private readonly all: Entry[];
  private readonly byBranch = new Map<string, Entry[]>();
  /** Calls by fingerprint, and by branch then fingerprint, in recorded order (served ones dropped lazily). */
  private readonly byHash = new Map<string, Entry[]>();
  private readonly byBranchHash = new Map<string, Map<string, Entry[]>>();
  private served = 0;
  private calls = 0;

  /** A replay of every model call recorded in `recordings` (a chunk seen twice counts once). */
  static from(...recordings: readonly Recording[]): ReplayProvider {
    const seen = new Set<string>();
    const nodes = new Map<string, LineageNode>();
    for (const recording of recordings) {
      const lineage = Array.isArray(recording) ? undefined : (recording as { lineage?: LineageNode }).lineage;
      if (lineage) nodesOf(lineage, nodes);
    }
    const calls: RecordedCall[] = [];
    for (const recording of recordings) {
      const chunks = Array.isArray(recording)
        ? (recording as readonly Chunk[])
        : (recording as { chunks: readonly Chunk[] }).chunks;
      const ownId = Array.isArray(recording)
        ? undefined
        : (recording as { lineage?: LineageNode }).lineage?.id;
      chunks.forEach((chunk, index) => {
        if (seen.has(chunk.id)) return;
        seen.add(chunk.id);
        const call = recordedCall(chunk, nodes.get(chunk.sessionId));
        if (!call) return;
        // The session that made the call holds its transcript up to the call: keep a way to rebuild it.
        const own = chunk.kind === "assistant" && chunk.sessionId === ownId;
        const rebuild = call.request;
        calls.push(
          own
            ? {
                ...call,
                request: () => ({
                  ...(rebuild?.() ?? {}),
                  transcript: chunks
                    .slice(0, index)
                    .map(chunkToMessage)
                    .filter((m): m is Message => m !== undefined),
                }),
              }
            : call,
        );
      });
    }
    return new ReplayProvider(calls);
  }

  /** @param calls - recorded calls; calls of one branch with the same fingerprint are answered in time order. */
  constructor(calls: readonly RecordedCall[], model = "replay") {
    this.model = model;
    this.all = [...calls].sort((a, b) => a.createdAt - b.createdAt).map((call) => ({ call, served: false }));
    const add = <K>(map: Map<K, Entry[]>, key: K, entry: Entry) => {
      const list = map.get(key);
      if (list) list.push(entry);
      else map.set(key, [entry]);
    };
    for (const entry of this.all) {
      add(this.byHash, entry.call.requestHash, entry);
      const branch = entry.call.branch;
      if (branch === undefined) continue;
      add(this.byBranch, branch, entry);
      let hashes = this.byBranchHash.get(branch);
      if (!hashes) {
        hashes = new Map();
        this.byBranchHash.set(branch, hashes);
      }
      add(hashes, entry.call.requestHash, entry);
    }
  }

  /** Requests answered so far. */
  get servedCount(): number {
    return this.served;
  }

  /** Recorded turns not replayed yet. */
  get remaining(): number {
    return this.all.length - this.served;
  }

  async complete(request: ProviderRequest, options: ProviderCallOptions = {}): Promise<ProviderResponse> {
    if (options.signal?.aborted)
      throw new ProviderError("aborted", "The model call was aborted.", { retryable: false });
    const call = ++this.calls;
    const hash = requestFingerprint(request);
    const position = options.position;
    const onBranch = position ? this.byBranch.get(position.branch) : undefined;
    // A known branch answers only from its own calls; an unknown one (or none) from any, by fingerprint.
    const list = onBranch ? this.byBranchHash.get(position!.branch)!.get(hash) : this.byHash.get(hash);
    while (list && list.length > 0 && list[0]!.served) list.shift();
    const entry = list?.[0];
    if (!entry) throw this.miss(call, hash, request, position, onBranch);
    entry.served = true;
    this.served++;
    return entry.call.response;
  }

  async *stream(request: ProviderRequest, options: ProviderCallOptions = {}): AsyncGenerator<ProviderDelta> {
    const response = await this.complete(request, options);
    if (response.content) yield { type: "text", text: response.content };
    for (const [index, call] of response.toolCalls.entries()) {
      yield {
        type: "tool_call",
        index,
        id: call.id,
        name: call.function.name,
        arguments: call.function.arguments,
      };
    }
    yield { type: "response", response };
  }

  private miss(
    call: number,
    hash: string,
    request: ProviderRequest,
    position: CallPosition | undefined,
    onBranch: readonly Entry[] | undefined,
  ): ProviderError {
    const last = request.messages.at(-1);
    const lastText = last
      ? `${last.role}: ${JSON.stringify(String(last.content ?? "").slice(0, 160))}`
      : "(no messages)";
    const where = position ? ` It is call ${position.index + 1} on branch ${position.label}.` : "";
    const pending = (onBranch ?? this.all).filter((e) => !e.served);
    const expected = pending[0]?.call;
    let differences: string[] = [];
    let told: string;
    if (expected) {
      differences = expected.request ? requestDifferences(request, expected.request()) : [];
      const what = differences.length > 0 ? `: ${differences.join("; ")}` : ` (${expected.requestHash})`;
      told = ` The next recorded turn, by ${expected.author ?? "an unnamed agent"}, answered a different request${onBranch ? " on this branch" : ""}${what}.`;
    } else if (onBranch) {
      told =
        " Every recorded call on this branch has been replayed already: the branch now makes more calls than it did.";
    } else {
      told = " Every recorded turn has been replayed already.";
    }
    const elsewhere =
      onBranch && this.all.some((e) => !e.served && e.call.requestHash === hash)
        ? " The recording answers this request on another branch: the run's branches no longer match the recording's."
        : "";
    return new ProviderError(
      "replay_miss",
      `Replay diverged at model call ${call}: no recorded turn answers this request (${hash}; ${request.messages.length} messages, the last ${lastText}).${where}${told}${elsewhere} The run no longer matches the recording: its inputs, tools or code changed.`,
      {
        retryable: false,
        details: {
          call,
          requestHash: hash,
          messages: request.messages.length,
          replayed: this.served,
          remaining: this.all.length - this.served,
          ...(position
            ? { branch: position.branch, branchLabel: position.label, branchCall: position.index + 1 }
            : {}),
          differences,
        },
      },
    );
  }
}
