import Anthropic from "@anthropic-ai/sdk";
import type {
  MessageCreateParamsNonStreaming,
  MessageCreateParamsStreaming,
} from "@anthropic-ai/sdk/resources/messages";
import {
  isSecretRef,
  OpenRathError,
  type ProviderCallOptions,
  type ProviderDelta,
  ProviderError,
  type ProviderRequest,
  type ProviderResponse,
  type ProviderV1,
  resolveSecret,
  type SecretProviderV1,
  type SecretRef,
} from "@openrath/core";
import { checkOptions } from "@openrath/core/backend";
import { foldAnthropicStream } from "./internal/fold-anthropic-stream.js";
import { type AnthropicMessageLike, fromAnthropicMessage } from "./internal/from-anthropic-message.js";
import { type ErrorContext, toProviderError } from "./internal/map-anthropic-error.js";
import {
  continuationBody,
  DEFAULT_MAX_PAUSE_CONTINUATIONS,
  joinSegments,
  type TurnSegment,
} from "./internal/paused-turn.js";
import { readEnv } from "./internal/read-env.js";
import { AnthropicProviderOptionsSchema } from "./internal/schemas.js";
import {
  type AnthropicRequestBody,
  type RequestDefaults,
  toAnthropicRequest,
} from "./internal/to-anthropic-request.js";

/** Options of {@link anthropicProvider}. Every field is optional. */
export interface AnthropicProviderOptions {
  /**
   * API key. Default: `ANTHROPIC_API_KEY`. With neither, the SDK's own credential chain applies
   * (`ANTHROPIC_AUTH_TOKEN`, then Anthropic profiles); a call without credentials fails with
   * `provider_auth`. Ignored when `client` is given. A reference (`secret("ANTHROPIC_API_KEY")`)
   * is resolved before every request from `secrets` (else the process-wide secret provider) and
   * never kept in the provider or its client.
   */
  readonly apiKey?: string | SecretRef;
  /** Where a secret-reference `apiKey` is resolved (default: the process-wide secret provider, the environment). */
  readonly secrets?: SecretProviderV1;
  /**
   * API base URL, such as a gateway or a local test server. Default: `ANTHROPIC_BASE_URL`, else
   * `https://api.anthropic.com`. Ignored when `client` is given.
   */
  readonly baseURL?: string;
  /**
   * Default model, overridable per request. Default: `ANTHROPIC_MODEL`. Required: without either
   * the factory throws `invalid_argument`.
   */
  readonly model?: string;
  /** Most tokens to generate when a request does not say (Anthropic requires a limit). Default 4096. */
  readonly maxTokens?: number;
  /** Default sampling temperature (sent as `temperature`). */
  readonly temperature?: number;
  /** Default nucleus sampling (sent as `top_p`). */
  readonly topP?: number;
  /** Default stop sequences (sent as `stop_sequences`). */
  readonly stop?: readonly string[];
  /**
   * How long to wait for the response to start, in milliseconds (the SDK's `timeout`: it bounds
   * the wait for the response headers, not a stream's length). Default: the SDK's (10 minutes).
   */
  readonly timeoutMs?: number;
  /**
   * How `responseFormat` (`json_object`, `json_schema`) reaches the model:
   * - `"tool"` (default): a tool named after the schema (`json_object` for `json_object`) whose
   *   input schema is the response schema, forced with `tool_choice`; its input comes back as the
   *   JSON text of `content`, and a finish reason of `stop`. Works with every tool-capable model.
   * - `"native"`: Anthropic's structured outputs (`output_config.format`), for models that have them.
   */
  readonly structuredOutput?: "tool" | "native";
  /**
   * How many times one turn is continued when the API pauses it (`stop_reason: "pause_turn"`,
   * sent while a long-running server tool such as web search works): the paused content goes
   * back as-is and the continuation's content, usage and deltas join the same response.
   * Default 8; `0` turns continuing off. A turn still paused after the last continuation ends
   * with finish reason `length`.
   */
  readonly maxPauseContinuations?: number;
  /** Vendor request fields sent with every call (`metadata`, `top_k`, `thinking`, …); a request's `extra` wins. */
  readonly extra?: Readonly<Record<string, unknown>>;
  /** Extra HTTP headers sent with every call (such as `anthropic-beta`). Ignored when `client` is given. */
  readonly headers?: Readonly<Record<string, string>>;
  /** A `fetch` to use instead of the global one. Ignored when `client` is given. */
  readonly fetch?: typeof globalThis.fetch;
  /**
   * A ready SDK client to use as is (its own key, base URL and headers). Calls still run with
   * `maxRetries: 0`: retrying is {@link callProvider}'s job.
   */
  readonly client?: Anthropic;
}

const DEFAULT_MAX_TOKENS = 4096;

function invalid(message: string, value: unknown): OpenRathError {
  return new OpenRathError("invalid_argument", message, { details: { value } });
}

function isMessage(value: unknown): value is AnthropicMessageLike {
  return (
    typeof value === "object" &&
    value !== null &&
    Array.isArray((value as { content?: unknown }).content) &&
    (value as { content: unknown[] }).content.every(
      (b) => typeof b === "object" && b !== null && typeof (b as { type?: unknown }).type === "string",
    )
  );
}

/**
 * A {@link ProviderV1} for the Anthropic Messages API (`POST /v1/messages`) through the official
 * `@anthropic-ai/sdk`. The SDK runs with `maxRetries: 0`; wrap calls in `callProvider` /
 * `streamProvider` for retries. Every failure is a `ProviderError` with a stable code.
 *
 * Mapping: system messages (wherever they stand) are joined with blank lines into `system`;
 * assistant tool calls become `tool_use` blocks (arguments that are not a JSON object travel as
 * `{"_raw": "<text>"}`); consecutive `tool` messages become one user turn of `tool_result` blocks
 * (`is_error` when the content is JSON with `"ok": false`); turns of one role are merged;
 * `toolChoice` maps to `auto`/`none`/`any`/`tool`, `parallelToolCalls: false` to
 * `disable_parallel_tool_use`; `seed` is not supported by Anthropic and is not sent.
 *
 * @throws OpenRathError `invalid_argument` for a bad or unknown option (checked by its schema: the
 * message names each bad field, never showing a key or a header), or when no model is given
 * (option or `ANTHROPIC_MODEL`).
 *
 * @example
 * ```ts
 * const provider = anthropicProvider({ model: "claude-sonnet-4-6" });
 * const reply = await provider.complete({ messages: [{ role: "user", content: "Hello" }] });
 * console.log(reply.content, reply.usage);
 * ```
 */
export function anthropicProvider(given: AnthropicProviderOptions = {}): ProviderV1 {
  const options = checkOptions(AnthropicProviderOptionsSchema, given, {
    backend: "anthropicProvider",
    secrets: ["headers"],
  });
  const model = options.model?.trim() || readEnv("ANTHROPIC_MODEL");
  if (model === undefined) {
    throw invalid(
      'anthropicProvider needs a model: pass { model: "claude-sonnet-4-6" } (or another Anthropic model id) or set ANTHROPIC_MODEL.',
      options.model,
    );
  }
  const ref = !options.client && isSecretRef(options.apiKey) ? options.apiKey : undefined;
  // With a secret reference the client holds a placeholder; each request carries the resolved
  // key in its own Authorization header, which wins over the client's (see ADR 0029).
  const apiKey = ref
    ? "resolved-per-request"
    : ((options.apiKey as string | undefined) ?? readEnv("ANTHROPIC_API_KEY"));
  const baseURL = options.baseURL ?? readEnv("ANTHROPIC_BASE_URL");
  const client =
    options.client ??
    new Anthropic({
      ...(apiKey !== undefined ? { apiKey } : {}),
      ...(baseURL !== undefined ? { baseURL } : {}),
      ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
      ...(options.headers !== undefined ? { defaultHeaders: { ...options.headers } } : {}),
      ...(options.fetch !== undefined ? { fetch: options.fetch } : {}),
      maxRetries: 0,
    });
  const defaults: RequestDefaults = {
    model,
    maxTokens: options.maxTokens ?? DEFAULT_MAX_TOKENS,
    temperature: options.temperature,
    topP: options.topP,
    stop: options.stop,
    structuredOutput: options.structuredOutput ?? "tool",
    extra: options.extra,
  };

  const context = (
    requestModel: string,
    phase: ErrorContext["phase"],
    signal: AbortSignal | undefined,
  ): ErrorContext => ({
    model: requestModel,
    baseURL: client.baseURL,
    timeoutMs: options.timeoutMs ?? client.timeout,
    phase,
    signal,
  });
  // A missing secret fails here with its own code (secret_not_found), before any request.
  const requestOptions = async (signal: AbortSignal | undefined) => ({
    maxRetries: 0,
    ...(signal ? { signal } : {}),
    ...(options.client && options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
    ...(ref
      ? {
          headers: {
            Authorization: `Bearer ${await resolveSecret(ref, { secrets: options.secrets, ...(signal ? { signal } : {}) })}`,
          },
        }
      : {}),
  });
  const aborted = (requestModel: string, signal: AbortSignal) =>
    toProviderError(signal.reason, context(requestModel, "request", signal));

  const maxPauses = options.maxPauseContinuations ?? DEFAULT_MAX_PAUSE_CONTINUATIONS;
  const paused = (segment: TurnSegment, pauses: number) =>
    segment.stop_reason === "pause_turn" && pauses < maxPauses;

  async function completeOnce(
    body: AnthropicRequestBody,
    requestModel: string,
    signal: AbortSignal | undefined,
  ): Promise<TurnSegment> {
    const { stream: _stream, ...params } = body;
    const sdkOptions = await requestOptions(signal);
    let message: unknown;
    try {
      message = await client.messages.create(
        params as unknown as MessageCreateParamsNonStreaming,
        sdkOptions,
      );
    } catch (error) {
      throw toProviderError(error, context(requestModel, "request", signal));
    }
    if (!isMessage(message)) {
      throw new ProviderError(
        "provider_response",
        `Anthropic answered the call to model "${requestModel}" with something that is not a message (${JSON.stringify(message)?.slice(0, 200)}). Check that the baseURL points at the Messages API.`,
        { status: 200, details: { body: typeof message === "string" ? message.slice(0, 2000) : message } },
      );
    }
    return message;
  }

  async function* streamOnce(
    body: AnthropicRequestBody,
    requestModel: string,
    signal: AbortSignal | undefined,
    schemaTool: string | undefined,
    toolIndexOffset: number,
  ): AsyncGenerator<ProviderDelta, TurnSegment> {
    const sdkOptions = await requestOptions(signal);
    let events: AsyncIterable<unknown>;
    try {
      events = await client.messages.create(
        { ...body, stream: true } as unknown as MessageCreateParamsStreaming,
        sdkOptions,
      );
    } catch (error) {
      throw toProviderError(error, context(requestModel, "request", signal));
    }
    try {
      return yield* foldAnthropicStream(events, requestModel, schemaTool, toolIndexOffset);
    } catch (error) {
      throw toProviderError(error, context(requestModel, "stream", signal));
    }
  }

  return {
    specVersion: "v1",
    name: "anthropic",
    model,

    async complete(request: ProviderRequest, call: ProviderCallOptions = {}): Promise<ProviderResponse> {
      const { signal } = call;
      const requestModel = request.model ?? model;
      if (signal?.aborted) throw aborted(requestModel, signal);
      const { body, schemaTool } = toAnthropicRequest(request, defaults);
      const segments: TurnSegment[] = [];
      for (let pauses = 0; ; pauses++) {
        const segment = await completeOnce(
          pauses === 0 ? body : continuationBody(body, segments),
          requestModel,
          signal,
        );
        segments.push(segment);
        if (!paused(segment, pauses)) break;
      }
      return fromAnthropicMessage(joinSegments(segments), requestModel, schemaTool);
    },

    async *stream(request: ProviderRequest, call: ProviderCallOptions = {}): AsyncGenerator<ProviderDelta> {
      const { signal } = call;
      const requestModel = request.model ?? model;
      if (signal?.aborted) throw aborted(requestModel, signal);
      const { body, schemaTool } = toAnthropicRequest(request, defaults);
      const segments: TurnSegment[] = [];
      const progress = { delivered: false, toolCalls: 0 };
      try {
        for (let pauses = 0; ; pauses++) {
          const segment = yield* delivering(
            streamOnce(
              pauses === 0 ? body : continuationBody(body, segments),
              requestModel,
              signal,
              schemaTool,
              progress.toolCalls,
            ),
            progress,
          );
          segments.push(segment);
          if (!paused(segment, pauses)) break;
        }
      } catch (error) {
        throw progress.delivered ? notRetryable(error) : error;
      }
      yield {
        type: "response",
        response: fromAnthropicMessage(
          joinSegments(segments) as AnthropicMessageLike,
          requestModel,
          schemaTool,
        ),
      };
    },
  };
}

/**
 * Passes `source`'s deltas on, noting in `progress` that output reached the caller and how many
 * tool calls started (so a continued turn numbers its calls after them), and closes `source`
 * (and with it the HTTP stream) when the caller stops early.
 */
async function* delivering<R>(
  source: AsyncGenerator<ProviderDelta, R>,
  progress: { delivered: boolean; toolCalls: number },
): AsyncGenerator<ProviderDelta, R> {
  try {
    for (;;) {
      const step = await source.next();
      if (step.done) return step.value;
      progress.delivered = true;
      if (step.value.type === "tool_call" && step.value.id !== undefined)
        progress.toolCalls = Math.max(progress.toolCalls, step.value.index + 1);
      yield step.value;
    }
  } finally {
    await source.return(undefined as R);
  }
}

/**
 * A failure after part of the reply was already streamed: not retryable, whatever its kind, since
 * trying again would repeat output the caller has seen (and acted on).
 */
function notRetryable(error: unknown): unknown {
  if (!ProviderError.isInstance(error) || !(error as ProviderError).retryable) return error;
  const e = error as ProviderError;
  return new ProviderError(
    e.code,
    `${e.message} Part of the reply was already streamed, so the call is not retried.`,
    {
      cause: e.cause,
      retryable: false,
      details: { ...e.details, partialOutputDelivered: true },
      ...(e.status !== undefined ? { status: e.status } : {}),
      ...(e.retryAfterMs !== undefined ? { retryAfterMs: e.retryAfterMs } : {}),
    },
  );
}
