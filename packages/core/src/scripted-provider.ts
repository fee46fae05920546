import type { JsonValue } from "./json.js";
import {
  type FinishReason,
  type ProviderCallOptions,
  type ProviderDelta,
  ProviderError,
  type ProviderErrorCode,
  type ProviderRequest,
  type ProviderResponse,
  type ProviderV1,
} from "./provider.js";
import type { Usage } from "./usage.js";

/** One scripted model turn. */
export interface ScriptedTurn {
  /** Reply text. */
  readonly text?: string;
  /** Tool calls; `arguments` may be an object (sent as its JSON) or raw text (sent as is, even invalid). */
  readonly toolCalls?: readonly {
    readonly name: string;
    readonly arguments?: JsonValue | string;
    readonly id?: string;
  }[];
  /** Usage to report; by default about one token per four characters in and out. */
  readonly usage?: Partial<Usage>;
  readonly finishReason?: FinishReason;
  /** Model name to report (default: the provider's). */
  readonly model?: string;
  /** Fail this call instead of answering. */
  readonly error?: {
    readonly code: ProviderErrorCode;
    readonly message?: string;
    readonly retryAfterMs?: number;
    readonly status?: number;
  };
  /** Wait this long before answering (honours abort). */
  readonly delayMs?: number;
}

/** A turn, or a function choosing the turn from the request and the 0-based call number. */
export type Script =
  | readonly ScriptedTurn[]
  | ((request: ProviderRequest, call: number) => ScriptedTurn | undefined);

const estimate = (text: string) => Math.ceil(text.length / 4);

/**
 * A deterministic provider for tests and keyless demos: it answers with scripted turns (text,
 * tool calls, usage, errors) in order, or from a function of the request. Tool-call ids are
 * `call_<n>` unless given, so transcripts are stable run to run. Every request is kept in
 * `requests` for assertions.
 *
 * @example
 * ```ts
 * const provider = new ScriptedProvider([
 *   { toolCalls: [{ name: "word_count", arguments: { text: "a b c" } }] },
 *   { text: "Three words." },
 * ]);
 * ```
 */
export class ScriptedProvider implements ProviderV1 {
  readonly specVersion = "v1" as const;
  readonly name = "scripted";
  /** Requests received, in order. */
  readonly requests: ProviderRequest[] = [];
  private calls = 0;
  private callIds = 0;

  constructor(
    private readonly script: Script,
    readonly model: string = "scripted",
    private readonly options: { readonly chunkSize?: number } = {},
  ) {}

  /** How many calls were made. */
  get callCount(): number {
    return this.calls;
  }

  async complete(request: ProviderRequest, options: ProviderCallOptions = {}): Promise<ProviderResponse> {
    return (await this.next(request, options)).response;
  }

  /**
   * The turn's answer as deltas: its text in `chunkSize` pieces, each tool call in two, then the
   * `response`. A plain iterator over the prepared deltas (not an async generator: no generator
   * hop per delta), so a loop's streaming overhead is not the double's.
   */
  stream(request: ProviderRequest, options: ProviderCallOptions = {}): AsyncIterableIterator<ProviderDelta> {
    let deltas: ProviderDelta[] | undefined;
    let at = 0;
    const iterator: AsyncIterableIterator<ProviderDelta> = {
      next: async () => {
        if (deltas === undefined) {
          // The turn is taken on the first read, as a generator's body would run.
          deltas = [];
          deltas = this.deltasOf((await this.next(request, options)).response);
        }
        return at < deltas.length ? { value: deltas[at++]!, done: false } : { value: undefined, done: true };
      },
      return: async () => {
        at = deltas?.length ?? 0;
        deltas ??= [];
        return { value: undefined, done: true };
      },
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }

  private deltasOf(response: ProviderResponse): ProviderDelta[] {
    const out: ProviderDelta[] = [];
    const size = this.options.chunkSize ?? 8;
    const text = response.content ?? "";
    for (let i = 0; i < text.length; i += size) out.push({ type: "text", text: text.slice(i, i + size) });
    for (const [index, call] of response.toolCalls.entries()) {
      const half = Math.ceil(call.function.arguments.length / 2);
      out.push({
        type: "tool_call",
        index,
        id: call.id,
        name: call.function.name,
        arguments: call.function.arguments.slice(0, half),
      });
      if (half < call.function.arguments.length)
        out.push({ type: "tool_call", index, arguments: call.function.arguments.slice(half) });
    }
    // The deltas above fold (as `DeltaAccumulator` folds them) into exactly this response.
    out.push({ type: "response", response });
    return out;
  }

  private async next(
    request: ProviderRequest,
    options: ProviderCallOptions,
  ): Promise<{ response: ProviderResponse }> {
    const call = this.calls++;
    this.requests.push(request);
    const turn = typeof this.script === "function" ? this.script(request, call) : this.script[call];
    if (!turn) {
      const last = request.messages.at(-1);
      throw new ProviderError(
        "script_exhausted",
        `ScriptedProvider has no turn for call ${call + 1} (${typeof this.script === "function" ? "the script function returned nothing" : `the script has ${this.script.length}`}); the request ended with ${last ? `a ${last.role} message: ${JSON.stringify(String(last.content ?? "").slice(0, 120))}` : "no messages"}.`,
        { retryable: false, details: { call } },
      );
    }
    if (turn.delayMs) await delay(turn.delayMs, options.signal);
    if (options.signal?.aborted)
      throw new ProviderError("aborted", "The model call was aborted.", { retryable: false });
    if (turn.error) {
      throw new ProviderError(
        turn.error.code,
        turn.error.message ?? `Scripted ${turn.error.code} on call ${call + 1}.`,
        {
          ...(turn.error.retryAfterMs !== undefined ? { retryAfterMs: turn.error.retryAfterMs } : {}),
          ...(turn.error.status !== undefined ? { status: turn.error.status } : {}),
        },
      );
    }
    const toolCalls = (turn.toolCalls ?? []).map((c) => ({
      id: c.id ?? `call_${++this.callIds}`,
      type: "function" as const,
      function: {
        name: c.name,
        arguments:
          typeof c.arguments === "string"
            ? c.arguments
            : c.arguments === undefined
              ? "{}"
              : JSON.stringify(c.arguments),
      },
    }));
    // A turn that calls tools with empty text has no text (null), in complete() as in stream().
    const text =
      turn.text === "" && toolCalls.length > 0 ? null : (turn.text ?? (toolCalls.length > 0 ? null : ""));
    const promptTokens = turn.usage?.promptTokens ?? estimate(JSON.stringify(request.messages));
    const completionTokens =
      turn.usage?.completionTokens ??
      estimate((text ?? "") + toolCalls.map((c) => c.function.arguments).join(""));
    const usage: Usage = {
      promptTokens,
      completionTokens,
      totalTokens: turn.usage?.totalTokens ?? promptTokens + completionTokens,
      ...(turn.usage?.cachedPromptTokens !== undefined
        ? { cachedPromptTokens: turn.usage.cachedPromptTokens }
        : {}),
    };
    return {
      response: {
        content: text,
        toolCalls,
        finishReason: turn.finishReason ?? (toolCalls.length > 0 ? "tool_calls" : "stop"),
        usage,
        model: turn.model ?? this.model,
      },
    };
  }
}

function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(new ProviderError("aborted", "The model call was aborted.", { retryable: false }));
      },
      { once: true },
    );
  });
}
