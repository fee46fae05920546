import { requestFingerprint } from "./agent.js";
import type { Chunk } from "./chunk.js";
import {
  type ProviderCallOptions,
  type ProviderDelta,
  ProviderError,
  type ProviderRequest,
  type ProviderResponse,
  type ProviderV1,
} from "./provider.js";
import type { Usage } from "./usage.js";

/** Anything holding recorded chunks: sessions, or plain chunk arrays. */
export type Recording = { readonly chunks: readonly Chunk[] } | readonly Chunk[];

/** One recorded model call: the request's fingerprint and the normalized answer. */
export interface RecordedCall {
  readonly requestHash: string;
  readonly response: ProviderResponse;
  /** Who made the call, for divergence messages. */
  readonly author?: string;
  /** When, to keep calls with the same fingerprint in order. */
  readonly createdAt: number;
}

/**
 * The model calls a chunk records: an agent's assistant turn, a compressor's summary, or a
 * selector's decision.
 */
export function recordedCall(chunk: Chunk): RecordedCall | undefined {
  const base = {
    createdAt: chunk.createdAt,
    ...(chunk.author !== undefined ? { author: chunk.author } : {}),
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
    } | null;
    if (!data?.requestHash) return undefined;
    return {
      ...base,
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

/**
 * Answers model requests from a recorded run instead of calling a model. Each assistant chunk an
 * agent writes carries the fingerprint of the request that produced it (`requestHash`); on replay
 * the same request gets the same answer, with zero provider calls. A request the recording has no
 * answer for fails closed with `replay_miss`, saying where the replay diverged.
 *
 * @example
 * ```ts
 * const recorded = await flow.run(question);                     // with a real or scripted provider
 * const replay = ReplayProvider.from(recorded, ...otherBranches);
 * const again = await flowWith(replay).run(question);            // same transcript, no model calls
 * ```
 */
export class ReplayProvider implements ProviderV1 {
  readonly specVersion = "v1" as const;
  readonly name = "replay";
  readonly model: string;
  private readonly answers = new Map<string, RecordedCall[]>();
  private readonly total: number;
  private served = 0;
  private calls = 0;

  /** A replay of every model call recorded in `recordings` (a chunk seen twice counts once). */
  static from(...recordings: readonly Recording[]): ReplayProvider {
    const seen = new Set<string>();
    const calls: RecordedCall[] = [];
    for (const recording of recordings) {
      const chunks = Array.isArray(recording)
        ? (recording as readonly Chunk[])
        : (recording as { chunks: readonly Chunk[] }).chunks;
      for (const chunk of chunks) {
        if (seen.has(chunk.id)) continue;
        seen.add(chunk.id);
        const call = recordedCall(chunk);
        if (call) calls.push(call);
      }
    }
    return new ReplayProvider(calls);
  }

  /** @param calls - recorded calls; calls with the same fingerprint are answered in time order. */
  constructor(calls: readonly RecordedCall[], model = "replay") {
    this.model = model;
    for (const call of [...calls].sort((a, b) => a.createdAt - b.createdAt)) {
      const queue = this.answers.get(call.requestHash) ?? [];
      queue.push(call);
      this.answers.set(call.requestHash, queue);
    }
    this.total = calls.length;
  }

  /** Requests answered so far. */
  get servedCount(): number {
    return this.served;
  }

  /** Recorded turns not replayed yet. */
  get remaining(): number {
    return this.total - this.served;
  }

  async complete(request: ProviderRequest, options: ProviderCallOptions = {}): Promise<ProviderResponse> {
    if (options.signal?.aborted)
      throw new ProviderError("aborted", "The model call was aborted.", { retryable: false });
    const call = ++this.calls;
    const hash = requestFingerprint(request);
    const recorded = this.answers.get(hash)?.shift();
    if (!recorded) throw this.miss(call, hash, request);
    this.served++;
    return recorded.response;
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

  private miss(call: number, hash: string, request: ProviderRequest): ProviderError {
    const last = request.messages.at(-1);
    const lastText = last
      ? `${last.role}: ${JSON.stringify(String(last.content ?? "").slice(0, 160))}`
      : "(no messages)";
    const pending = [...this.answers.values()].flat().sort((a, b) => a.createdAt - b.createdAt);
    const next = pending[0];
    const expected = next
      ? ` The next recorded turn, by ${next.author ?? "an unnamed agent"}, answered a different request (${next.requestHash}).`
      : " Every recorded turn has been replayed already.";
    return new ProviderError(
      "replay_miss",
      `Replay diverged at model call ${call}: no recorded turn answers this request (${hash}; ${request.messages.length} messages, the last ${lastText}).${expected} The run no longer matches the recording: its inputs, tools or code changed.`,
      {
        retryable: false,
        details: {
          call,
          requestHash: hash,
          messages: request.messages.length,
          replayed: this.served,
          remaining: pending.length,
        },
      },
    );
  }
}
