import Anthropic from "@anthropic-ai/sdk";
import type {
  MessageCreateParamsNonStreaming,
  MessageCreateParamsStreaming,
} from "@anthropic-ai/sdk/resources/messages";
import {
  OpenRathError,
  type ProviderCallOptions,
  type ProviderDelta,
  ProviderError,
  type ProviderRequest,
  type ProviderResponse,
  type ProviderV1,
} from "@openrath/core";
import { foldAnthropicStream } from "./internal/fold-anthropic-stream.js";
import { type AnthropicMessageLike, fromAnthropicMessage } from "./internal/from-anthropic-message.js";
import { type ErrorContext, toProviderError } from "./internal/map-anthropic-error.js";
import { readEnv } from "./internal/read-env.js";
import { type RequestDefaults, toAnthropicRequest } from "./internal/to-anthropic-request.js";

/** Options of {@link anthropicProvider}. Every field is optional. */
export interface AnthropicProviderOptions {
  /**
   * API key. Default: `ANTHROPIC_API_KEY`. With neither, the SDK's own credential chain applies
   * (`ANTHROPIC_AUTH_TOKEN`, then Anthropic profiles); a call without credentials fails with
   * `provider_auth`. Ignored when `client` is given.
   */
  readonly apiKey?: string;
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

function checkOptions(options: AnthropicProviderOptions): void {
  const { maxTokens, timeoutMs, structuredOutput } = options;
  if (maxTokens !== undefined && (!Number.isInteger(maxTokens) || maxTokens < 1)) {
    throw invalid(
      `anthropicProvider: maxTokens must be a whole number of at least 1; got ${maxTokens}.`,
      maxTokens,
    );
  }
  if (timeoutMs !== undefined && (!Number.isFinite(timeoutMs) || timeoutMs <= 0)) {
    throw invalid(
      `anthropicProvider: timeoutMs must be a positive number of milliseconds; got ${timeoutMs}.`,
      timeoutMs,
    );
  }
  if (structuredOutput !== undefined && structuredOutput !== "tool" && structuredOutput !== "native") {
    throw invalid(
      `anthropicProvider: structuredOutput must be "tool" or "native"; got ${JSON.stringify(structuredOutput)}.`,
      structuredOutput,
    );
  }
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
 * @throws OpenRathError `invalid_argument` when no model is given (option or `ANTHROPIC_MODEL`)
 * or an option is out of range.
 *
 * @example
 * ```ts
 * const provider = anthropicProvider({ model: "claude-sonnet-4-6" });
 * const reply = await provider.complete({ messages: [{ role: "user", content: "Hello" }] });
 * console.log(reply.content, reply.usage);
 * ```
 */
export function anthropicProvider(options: AnthropicProviderOptions = {}): ProviderV1 {
  checkOptions(options);
  const model = options.model?.trim() || readEnv("ANTHROPIC_MODEL");
  if (model === undefined) {
    throw invalid(
      'anthropicProvider needs a model: pass { model: "claude-sonnet-4-6" } (or another Anthropic model id) or set ANTHROPIC_MODEL.',
      options.model,
    );
  }
  const apiKey = options.apiKey ?? readEnv("ANTHROPIC_API_KEY");
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
  const requestOptions = (signal: AbortSignal | undefined) => ({
    maxRetries: 0,
    ...(signal ? { signal } : {}),
    ...(options.client && options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
  });
  const aborted = (requestModel: string, signal: AbortSignal) =>
    toProviderError(signal.reason, context(requestModel, "request", signal));

  return {
    specVersion: "v1",
    name: "anthropic",
    model,

    async complete(request: ProviderRequest, call: ProviderCallOptions = {}): Promise<ProviderResponse> {
      const { signal } = call;
      const requestModel = request.model ?? model;
      if (signal?.aborted) throw aborted(requestModel, signal);
      const { body, schemaTool } = toAnthropicRequest(request, defaults);
      const { stream: _stream, ...params } = body;
      let message: unknown;
      try {
        message = await client.messages.create(
          params as unknown as MessageCreateParamsNonStreaming,
          requestOptions(signal),
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
      return fromAnthropicMessage(message, requestModel, schemaTool);
    },

    async *stream(request: ProviderRequest, call: ProviderCallOptions = {}): AsyncGenerator<ProviderDelta> {
      const { signal } = call;
      const requestModel = request.model ?? model;
      if (signal?.aborted) throw aborted(requestModel, signal);
      const { body, schemaTool } = toAnthropicRequest(request, defaults);
      let events: AsyncIterable<unknown>;
      try {
        events = await client.messages.create(
          { ...body, stream: true } as unknown as MessageCreateParamsStreaming,
          requestOptions(signal),
        );
      } catch (error) {
        throw toProviderError(error, context(requestModel, "request", signal));
      }
      try {
        yield* foldAnthropicStream(events, requestModel, schemaTool);
      } catch (error) {
        throw toProviderError(error, context(requestModel, "stream", signal));
      }
    },
  };
}
