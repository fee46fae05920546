import { backoffDelay } from "./backend-helpers.js";
import type { CallPosition } from "./call-position.js";
import type { Message, ReasoningItem, ToolCall } from "./chunk.js";
import { OpenRathError, type OpenRathErrorOptions } from "./errors.js";
import { AbortableReader, linkedController, raceAbort, racesOn } from "./internal/abort.js";
import { AsyncQueue } from "./internal/async-queue.js";
import type { JsonObject } from "./json.js";
import type { Usage } from "./usage.js";

/** A tool as offered to the model: OpenAI function-tool shape with a JSON Schema for its parameters. */
export interface ToolSpec {
  readonly type: "function";
  readonly function: {
    readonly name: string;
    readonly description?: string;
    /** JSON Schema of the arguments object. */
    readonly parameters: JsonObject;
    /** Ask the provider to hold the model to the schema exactly, where it can. */
    readonly strict?: boolean;
  };
}

/** How the model may use tools: freely, not at all, at least one, or one named tool. */
export type ToolChoice = "auto" | "none" | "required" | { readonly name: string };

/** Structured output: free text, any JSON object, or JSON matching a schema. */
export type ResponseFormat =
  | { readonly type: "text" }
  | { readonly type: "json_object" }
  | {
      readonly type: "json_schema";
      readonly name: string;
      readonly schema: JsonObject;
      readonly strict?: boolean;
    };

/**
 * A normalized model request. Messages are OpenAI-shaped (system first, then the transcript);
 * providers translate them to their wire format. An agent shares its (frozen) message objects
 * between the requests of a run: read them, copy before changing anything.
 */
export interface ProviderRequest {
  readonly messages: readonly Message[];
  readonly tools?: readonly ToolSpec[];
  readonly toolChoice?: ToolChoice;
  /** Overrides the provider's model for this call. */
  readonly model?: string;
  readonly temperature?: number;
  readonly topP?: number;
  /** Most tokens to generate. */
  readonly maxTokens?: number;
  readonly stop?: readonly string[];
  readonly seed?: number;
  readonly responseFormat?: ResponseFormat;
  readonly parallelToolCalls?: boolean;
  /** Vendor-specific request fields, merged last. */
  readonly extra?: Readonly<Record<string, unknown>>;
}

/**
 * Why the model stopped: `stop` (done), `tool_calls` (wants tools run), `length` (hit the token
 * limit), `content_filter` (refused by a filter). Providers map vendor reasons onto these.
 */
export type FinishReason = "stop" | "tool_calls" | "length" | "content_filter";

/** A normalized model response. */
export interface ProviderResponse {
  /** Text of the reply, or `null` when it only calls tools. */
  readonly content: string | null;
  /** Tool calls in OpenAI wire shape, `arguments` as the raw JSON text. Empty when none. */
  readonly toolCalls: readonly ToolCall[];
  readonly finishReason: FinishReason;
  /**
   * Token usage of the call. Absent when the server reported none (an OpenAI-compatible stream
   * that sends no usage chunk): unknown, which a provider never reports as zeros.
   */
  readonly usage?: Usage;
  /**
   * Opaque provider state of the turn (Anthropic thinking blocks, OpenAI Responses reasoning
   * items) that must go back to the same provider with this turn; stored on the assistant chunk
   * as `reasoning`, so the next request's assistant message carries it. Absent when there is none.
   */
  readonly reasoning?: readonly ReasoningItem[];
  /** The model that answered, as the vendor reported it. */
  readonly model: string;
}

/** One streamed piece of a response; a stream always ends with exactly one `response` event. */
export type ProviderDelta =
  | { readonly type: "text"; readonly text: string }
  | {
      readonly type: "tool_call";
      /** Position of the call in the turn; deltas of one call share it. */
      readonly index: number;
      readonly id?: string;
      readonly name?: string;
      /** The next piece of the raw JSON arguments. */
      readonly arguments?: string;
    }
  | { readonly type: "response"; readonly response: ProviderResponse };

/** Options of every provider call. */
export interface ProviderCallOptions {
  /** Cancels the call; the provider rejects with code `aborted`. */
  readonly signal?: AbortSignal;
  /**
   * Where the call sits in its run (branch and number on it), when a run makes it. Vendors ignore
   * it; `ReplayProvider` answers by it, so parallel branches with the same request get their own
   * recorded answers.
   */
  readonly position?: CallPosition;
}

/**
 * A model provider (contract v1). Implementations translate {@link ProviderRequest} to a vendor
 * API and back, and throw {@link ProviderError} with `retryable` set for transient failures; they
 * do not retry themselves (see {@link callProvider}).
 */
export interface ProviderV1 {
  readonly specVersion: "v1";
  /** Vendor name, such as `openai`, `anthropic` or `scripted`. */
  readonly name: string;
  /** Default model. */
  readonly model: string;
  /** One complete response. */
  complete(request: ProviderRequest, options?: ProviderCallOptions): Promise<ProviderResponse>;
  /** The response as deltas, ending with a `response` event. Optional: without it, callers fall back to `complete`. */
  stream?(request: ProviderRequest, options?: ProviderCallOptions): AsyncIterable<ProviderDelta>;
}

/**
 * Error codes of the provider plane: `provider_rate_limited` (429), `provider_unavailable` (5xx,
 * overloaded), `provider_connection` (network), `provider_timeout`, `provider_stream` (a stream cut
 * or malformed mid-way), `provider_bad_request` (4xx the caller must fix), `provider_auth`
 * (401/403), `provider_response` (a reply that cannot be used), `replay_miss` (a replay has no
 * recording for the request), `script_exhausted` (a scripted provider ran out of turns), `aborted`.
 */
export type ProviderErrorCode =
  | "provider_rate_limited"
  | "provider_unavailable"
  | "provider_connection"
  | "provider_timeout"
  | "provider_stream"
  | "provider_bad_request"
  | "provider_auth"
  | "provider_response"
  | "replay_miss"
  | "script_exhausted"
  | "aborted";

/** An error from a model provider. */
export class ProviderError extends OpenRathError {
  declare readonly code: ProviderErrorCode;
  /** Whether trying the same call again may succeed. */
  readonly retryable: boolean;
  /** How long the server asked us to wait before retrying, in milliseconds. */
  readonly retryAfterMs: number | undefined;
  /** HTTP status, when the failure came from an HTTP answer. */
  readonly status: number | undefined;

  constructor(
    code: ProviderErrorCode,
    message: string,
    options: OpenRathErrorOptions & { retryable?: boolean; retryAfterMs?: number; status?: number } = {},
  ) {
    super(code, message, options);
    this.retryable =
      options.retryable ??
      (code === "provider_rate_limited" ||
        code === "provider_unavailable" ||
        code === "provider_connection" ||
        code === "provider_timeout" ||
        code === "provider_stream");
    this.retryAfterMs = options.retryAfterMs;
    this.status = options.status;
  }
}

/** How {@link callProvider} retries transient failures. */
export interface RetryPolicy {
  /** Total attempts including the first (default 4; values below 1 mean 1). */
  readonly maxAttempts?: number;
  /** First backoff in milliseconds (default 500); doubles per attempt. */
  readonly baseDelayMs?: number;
  /** Longest wait in milliseconds, retry-after included (default 30 000). */
  readonly maxDelayMs?: number;
  /** Called before each wait, for logs and metrics. */
  readonly onRetry?: (info: { attempt: number; delayMs: number; error: ProviderError }) => void;
}

/** The wait before retry number `attempt` (1-based): exponential with jitter, or the server's retry-after. */
export function retryDelay(
  attempt: number,
  error: ProviderError,
  policy: RetryPolicy = {},
  random: () => number = Math.random,
): number {
  const base = policy.baseDelayMs ?? 500;
  const max = policy.maxDelayMs ?? 30_000;
  if (error.retryAfterMs !== undefined) return Math.min(max, Math.max(0, error.retryAfterMs));
  return backoffDelay(attempt, { baseMs: base, maxMs: max, jitter: random });
}

function abortError(signal: AbortSignal): ProviderError {
  return new ProviderError("aborted", "The model call was aborted.", {
    cause: signal.reason,
    retryable: false,
  });
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal!));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Options of {@link callProvider} and {@link streamProvider}. */
export type RetryOptions = {
  readonly signal?: AbortSignal | undefined;
  readonly position?: CallPosition | undefined;
  readonly retry?: RetryPolicy | undefined;
  /**
   * Streams the call: each text and tool-call delta is passed here as it arrives (from
   * `provider.stream`, or as one text delta from `complete` for providers without it).
   */
  readonly onDelta?: ((delta: Exclude<ProviderDelta, { type: "response" }>) => void) | undefined;
};

/**
 * Calls `provider`, retrying transient {@link ProviderError}s with exponential backoff and jitter
 * (or the server's retry-after); any other error, an abort, or the last attempt's error is thrown
 * as is. With `onDelta` it streams: deltas go to `onDelta` as they arrive, and a failure after the
 * first delta is not retried (the output is already out). An abort rejects at once, even inside a
 * provider that ignores its signal. This is the one retry loop: {@link streamProvider} is built on it.
 */
export async function callProvider(
  provider: ProviderV1,
  request: ProviderRequest,
  options: RetryOptions = {},
): Promise<ProviderResponse> {
  const attempts = Math.max(1, options.retry?.maxAttempts ?? 4);
  const signal = options.signal;
  const onDelta = options.onDelta;
  const callOptions: ProviderCallOptions =
    signal || options.position
      ? { ...(signal ? { signal } : {}), ...(options.position ? { position: options.position } : {}) }
      : {};
  // Racing costs a promise per step: only when someone may be waiting on an abort.
  const raced = racesOn(signal);
  const aborted = raced ? () => abortError(signal) : undefined;
  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) throw abortError(signal);
    let started = false;
    try {
      if (!onDelta || !provider.stream) {
        const pending = provider.complete(request, callOptions);
        const response = await (aborted ? raceAbort(pending, signal, aborted) : pending);
        if (onDelta && response.content) onDelta({ type: "text", text: response.content });
        return response;
      }
      const iterator = provider.stream(request, callOptions)[Symbol.asyncIterator]();
      const reader = aborted ? new AbortableReader(iterator, signal, aborted) : iterator;
      let ended = false;
      try {
        for (;;) {
          const next = await reader.next();
          if (next.done) {
            ended = true;
            throw new ProviderError(
              "provider_stream",
              `The "${provider.name}" stream ended without a final response.`,
              { retryable: !started },
            );
          }
          const delta = next.value;
          if (delta.type === "response") return delta.response;
          started = true;
          onDelta(delta);
        }
      } finally {
        // Close the provider's stream when we stop before its end (the response, an abort, a
        // throwing onDelta), as `for await` would; without waiting on a provider that hangs.
        if (!ended) void Promise.resolve(iterator.return?.()).catch(() => {});
      }
    } catch (error) {
      if (
        started ||
        signal?.aborted ||
        !ProviderError.isInstance(error) ||
        !(error as ProviderError).retryable ||
        attempt >= attempts
      )
        throw error;
      const delayMs = retryDelay(attempt, error as ProviderError, options.retry);
      options.retry?.onRetry?.({ attempt, delayMs, error: error as ProviderError });
      await sleep(delayMs, signal);
    }
  }
}

/**
 * Streams from `provider` as deltas ending with one `response` event, on {@link callProvider}'s
 * retry loop: transient failures before the first delta are retried, later ones are thrown.
 * Falls back to `complete` for providers without `stream`, yielding the text as one delta.
 */
export async function* streamProvider(
  provider: ProviderV1,
  request: ProviderRequest,
  options: Omit<RetryOptions, "onDelta"> = {},
): AsyncGenerator<ProviderDelta> {
  // A consumer that stops reading ends the call too.
  const { controller, unlink } = linkedController(options.signal);
  const queue = new AsyncQueue<ProviderDelta>(() => controller.abort());
  callProvider(provider, request, {
    ...options,
    signal: controller.signal,
    onDelta: (delta) => queue.push(delta),
  })
    .finally(unlink)
    .then(
      (response) => {
        queue.push({ type: "response", response });
        queue.end();
      },
      (error) => queue.fail(error),
    );
  yield* queue;
}

/**
 * Folds stream deltas into one response, the way every provider's `stream` must agree with its
 * `complete`: text concatenated, tool calls gathered by index. Providers may use it to build the
 * final `response` event.
 */
export class DeltaAccumulator {
  private text = "";
  private readonly calls = new Map<number, { id: string; name: string; arguments: string }>();

  /** Adds one delta (a `response` delta is ignored). */
  add(delta: ProviderDelta): void {
    if (delta.type === "text") this.text += delta.text;
    else if (delta.type === "tool_call") {
      const call = this.calls.get(delta.index) ?? { id: "", name: "", arguments: "" };
      if (delta.id) call.id = delta.id;
      if (delta.name) call.name += delta.name;
      if (delta.arguments) call.arguments += delta.arguments;
      this.calls.set(delta.index, call);
    }
  }

  /** The response so far, with `finishReason` defaulting to `tool_calls` when there are calls. */
  response(fields: { model: string; usage?: Usage; finishReason?: FinishReason }): ProviderResponse {
    const toolCalls: ToolCall[] = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, c]) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }));
    return {
      content: this.text === "" && toolCalls.length > 0 ? null : this.text,
      toolCalls,
      finishReason: fields.finishReason ?? (toolCalls.length > 0 ? "tool_calls" : "stop"),
      model: fields.model,
      ...(fields.usage ? { usage: fields.usage } : {}),
    };
  }
}
