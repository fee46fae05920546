import {
  OpenRathError,
  type ProviderCallOptions,
  type ProviderDelta,
  ProviderError,
  type ProviderRequest,
  type ProviderResponse,
  type ProviderV1,
  type Usage,
} from "@openrath/core";
import { DeltaAccumulator } from "@openrath/core/backend";
import OpenAI, { type ClientOptions } from "openai";
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
} from "openai/resources/chat/completions";
import { callControl } from "./internal/call-control.js";
import { finalResponse, LEGACY_FUNCTION_CALL_ID } from "./internal/final-response.js";
import { fromWireResponse } from "./internal/from-wire-response.js";
import { readEnv } from "./internal/read-env.js";
import {
  abortedError,
  type ErrorContext,
  timeoutError,
  toProviderError,
} from "./internal/to-provider-error.js";
import { toUsage } from "./internal/to-usage.js";
import { toWireRequest } from "./internal/to-wire-request.js";
import { ToolCallDeltas } from "./internal/tool-call-deltas.js";

/** The longest wait for the server, by default: the SDK's own default of 10 minutes. */
const DEFAULT_TIMEOUT_MS = 600_000;

/** Options of {@link openaiProvider}. Every field is optional; the model must come from here or the environment. */
export interface OpenAIProviderOptions {
  /** API key. Default: `OPENAI_API_KEY`. Not needed with a custom `baseURL` (sent without `Authorization`). */
  readonly apiKey?: string;
  /**
   * Base URL of an OpenAI-compatible API, up to and including `/v1` (such as
   * `http://localhost:11434/v1`). Default: `OPENAI_BASE_URL`, else `https://api.openai.com/v1`.
   */
  readonly baseURL?: string;
  /** Default model, overridable per request. Default: `OPENAI_MODEL`; one of the two is required. */
  readonly model?: string;
  /** OpenAI organization id. Default: `OPENAI_ORG_ID` (read by the SDK). */
  readonly organization?: string;
  /** OpenAI project id. Default: `OPENAI_PROJECT_ID` (read by the SDK). */
  readonly project?: string;
  /** Extra HTTP headers on every request (for gateways such as OpenRouter or LiteLLM). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Default sampling temperature; a request's own value wins. */
  readonly temperature?: number;
  /** Default nucleus sampling `top_p`; a request's own value wins. */
  readonly topP?: number;
  /** Default `max_completion_tokens`; a request's `maxTokens` wins. */
  readonly maxTokens?: number;
  /**
   * The Chat Completions field that carries `maxTokens`: `max_completion_tokens` (default, what
   * OpenAI reads; `max_tokens` is deprecated there and refused by reasoning models) or
   * `max_tokens`, for OpenAI-compatible servers that only read the older name (llama.cpp's
   * server, Ollama, vLLM and other compatibility layers ignore `max_completion_tokens`, so the
   * limit would silently not apply).
   */
  readonly maxTokensField?: "max_completion_tokens" | "max_tokens";
  /** Default stop sequences; a request's own list wins. */
  readonly stop?: readonly string[];
  /** Default seed; a request's own value wins. */
  readonly seed?: number;
  /** Default `parallel_tool_calls` (sent only with tools); a request's own value wins. */
  readonly parallelToolCalls?: boolean;
  /**
   * Vendor fields merged into every request body before the request's own `extra` (such as
   * `{ reasoning_effort: "low" }`, or `{ stream_options: undefined }` for a server that rejects
   * `stream_options`).
   */
  readonly extra?: Readonly<Record<string, unknown>>;
  /**
   * The longest the provider waits while the server sends nothing, in milliseconds: the whole
   * reply for `complete`, the gap between events for `stream`. Default 600 000 (10 minutes).
   */
  readonly timeoutMs?: number;
  /**
   * A pre-built SDK client, used as is instead of one built from `apiKey`, `baseURL`,
   * `organization`, `project`, `headers` and `fetch`. Each call still passes `maxRetries: 0`.
   */
  readonly client?: OpenAI;
  /** A `fetch` implementation for the SDK (a proxy agent, a test double). */
  readonly fetch?: ClientOptions["fetch"];
}

function positive(name: string, value: number | undefined): void {
  if (value !== undefined && !(Number.isFinite(value) && value > 0)) {
    throw new OpenRathError(
      "invalid_argument",
      `openaiProvider option ${name} must be a positive number of milliseconds, got ${String(value)}.`,
      { details: { option: name, value } },
    );
  }
}

function createClient(options: OpenAIProviderOptions, timeoutMs: number): OpenAI {
  const baseURL = options.baseURL ?? readEnv("OPENAI_BASE_URL");
  const apiKey = options.apiKey ?? readEnv("OPENAI_API_KEY");
  if (!apiKey && !baseURL) {
    throw new OpenRathError(
      "invalid_argument",
      "openaiProvider has no API key: pass { apiKey } or set OPENAI_API_KEY. For an OpenAI-compatible server that needs no key, pass { baseURL } (or set OPENAI_BASE_URL).",
      { details: { option: "apiKey" } },
    );
  }
  return new OpenAI({
    // The SDK insists on a key; without one the Authorization header is removed below.
    apiKey: apiKey ?? "no-key",
    baseURL: baseURL ?? null,
    ...(options.organization !== undefined ? { organization: options.organization } : {}),
    ...(options.project !== undefined ? { project: options.project } : {}),
    defaultHeaders: { ...options.headers, ...(apiKey ? {} : { Authorization: null }) },
    maxRetries: 0,
    timeout: timeoutMs,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    // Failures come back as ProviderErrors with the offending data; the SDK's console logging
    // would only repeat them. OPENAI_LOG still turns it on.
    ...(readEnv("OPENAI_LOG") ? {} : { logLevel: "off" as const }),
  });
}

/**
 * A model provider for OpenAI Chat Completions through the official `openai` SDK. Works with any
 * OpenAI-compatible server (vLLM, Ollama, LiteLLM, OpenRouter, Azure's `/openai/v1`) through
 * `baseURL`. The SDK never retries (`maxRetries: 0`): wrap calls in core's `callProvider` or
 * `streamProvider`, which retry transient {@link ProviderError}s and honour `retry-after`.
 *
 * Streams ask for `stream_options: { include_usage: true }`, yield text and tool-call deltas as
 * they arrive, and end with one `response` event equal to what `complete` returns. A refusal
 * (OpenAI's `refusal` field) becomes the reply's text with finish reason `content_filter`.
 *
 * @throws {OpenRathError} `invalid_argument` when there is no model (`options.model` or
 *   `OPENAI_MODEL`), no API key and no base URL, a bad `timeoutMs` or `maxTokensField`.
 *
 * @example
 * ```ts
 * import { callProvider } from "@openrath/core/backend";
 * import { openaiProvider } from "@openrath/provider-openai";
 *
 * const provider = openaiProvider({ model: "gpt-4o-mini" });
 * const reply = await callProvider(provider, { messages: [{ role: "user", content: "Hi!" }] });
 * console.log(reply.content, reply.usage);
 * ```
 */
export function openaiProvider(options: OpenAIProviderOptions = {}): ProviderV1 {
  const model = options.model ?? readEnv("OPENAI_MODEL");
  if (!model) {
    throw new OpenRathError(
      "invalid_argument",
      'openaiProvider needs a model: pass { model: "gpt-4o-mini" } (or any model your server serves) or set OPENAI_MODEL.',
      { details: { option: "model" } },
    );
  }
  positive("timeoutMs", options.timeoutMs);
  if (
    options.maxTokensField !== undefined &&
    options.maxTokensField !== "max_completion_tokens" &&
    options.maxTokensField !== "max_tokens"
  ) {
    throw new OpenRathError(
      "invalid_argument",
      `openaiProvider option maxTokensField must be "max_completion_tokens" or "max_tokens", got ${JSON.stringify(options.maxTokensField)}.`,
      { details: { option: "maxTokensField", value: options.maxTokensField } },
    );
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const client = options.client ?? createClient(options, timeoutMs);
  const baseURL = client.baseURL;
  const requestOptions = (signal: AbortSignal) => ({ signal, maxRetries: 0, timeout: timeoutMs });

  async function complete(
    request: ProviderRequest,
    call: ProviderCallOptions = {},
  ): Promise<ProviderResponse> {
    const body = toWireRequest(request, options, model!, false);
    const requested = body.model as string;
    if (call.signal?.aborted) throw abortedError(requested, call.signal);
    const control = callControl(call.signal, timeoutMs);
    try {
      const completion: ChatCompletion = await client.chat.completions.create(
        body as unknown as ChatCompletionCreateParamsNonStreaming,
        requestOptions(control.signal),
      );
      return fromWireResponse(completion, requested);
    } catch (error) {
      throw toProviderError(error, {
        model: requested,
        baseURL,
        signal: call.signal,
        timedOut: control.timedOut,
        timeoutMs,
        phase: "request",
        started: false,
      });
    } finally {
      control.done();
    }
  }

  async function* stream(
    request: ProviderRequest,
    call: ProviderCallOptions = {},
  ): AsyncGenerator<ProviderDelta, void, undefined> {
    const body = toWireRequest(request, options, model!, true);
    const requested = body.model as string;
    if (call.signal?.aborted) throw abortedError(requested, call.signal);
    const control = callControl(call.signal, timeoutMs);
    const accumulator = new DeltaAccumulator();
    let phase: ErrorContext["phase"] = "request";
    let started = false;
    let refused = false;
    let finishReason: string | undefined;
    let usage: Usage | undefined;
    let answeredModel: string | undefined;
    const toolCalls = new ToolCallDeltas();
    const context = (): ErrorContext => ({
      model: requested,
      baseURL,
      signal: call.signal,
      timedOut: control.timedOut,
      timeoutMs,
      phase,
      started,
    });
    try {
      const chunks = await client.chat.completions.create(
        body as unknown as ChatCompletionCreateParamsStreaming,
        requestOptions(control.signal),
      );
      phase = "stream";
      control.touch();
      for await (const chunk of chunks as AsyncIterable<ChatCompletionChunk>) {
        if (typeof chunk?.model === "string" && chunk.model !== "") answeredModel = chunk.model;
        usage = toUsage(chunk?.usage) ?? usage;
        const choices = Array.isArray(chunk?.choices) ? chunk.choices : [];
        const choice = choices.find((c) => c?.index === 0) ?? choices[0];
        if (!choice) continue;
        if (choice.finish_reason) finishReason = choice.finish_reason;
        const delta = choice.delta ?? {};
        const out: ProviderDelta[] = [];
        if (typeof delta.content === "string" && delta.content !== "") {
          out.push({ type: "text", text: delta.content });
        }
        if (typeof delta.refusal === "string" && delta.refusal !== "") {
          refused = true;
          out.push({ type: "text", text: delta.refusal });
        }
        for (const piece of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
          const d = toolCalls.next(piece);
          if (d) out.push(d);
        }
        if (delta.function_call && !delta.tool_calls?.length) {
          const d = toolCalls.next({ index: 0, id: LEGACY_FUNCTION_CALL_ID, function: delta.function_call });
          if (d) out.push(d);
        }
        if (out.length === 0) {
          control.touch();
          continue;
        }
        // The caller's pace is not the server's silence: no deadline while a delta is out.
        control.pause();
        for (const d of out) {
          accumulator.add(d);
          started = true;
          yield d;
        }
        control.touch();
      }
    } catch (error) {
      throw toProviderError(error, context());
    } finally {
      control.done();
    }
    // The SDK ends a stream quietly when its signal aborts, so look at why it ended.
    if (call.signal?.aborted) throw abortedError(requested, call.signal);
    if (control.timedOut) throw timeoutError(context());
    if (finishReason === undefined) {
      throw new ProviderError(
        "provider_stream",
        `The stream from model "${requested}" ended before the model finished (no finish_reason and no [DONE]).${started ? " Its partial output was already delivered, so it is not retried." : " Retry the call."}`,
        { retryable: !started, details: { model: requested, baseURL } },
      );
    }
    const folded = accumulator.response({ model: answeredModel ?? requested });
    yield {
      type: "response",
      response: finalResponse({
        text: folded.content ?? "",
        refused,
        toolCalls: folded.toolCalls,
        finishReason,
        usage,
        model: answeredModel ?? requested,
      }),
    };
  }

  return { specVersion: "v1", name: "openai", model, complete, stream };
}
