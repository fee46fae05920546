import {
  isSecretRef,
  OpenRathError,
  type ProviderV1,
  resolveSecret,
  type SecretProviderV1,
  type SecretRef,
} from "@openrath/core";
import { checkOptions } from "@openrath/core/backend";
import OpenAI, { type ClientOptions } from "openai";
import type { CallSettings } from "./internal/call-driver.js";
import { chatApi } from "./internal/chat-api.js";
import { readEnv } from "./internal/read-env.js";
import { responsesApi } from "./internal/responses-api.js";
import { OpenAIProviderOptionsSchema } from "./internal/schemas.js";

/** The longest wait for the server, by default: the SDK's own default of 10 minutes. */
const DEFAULT_TIMEOUT_MS = 600_000;

/** Options of {@link openaiProvider}. Every field is optional; the model must come from here or the environment. */
export interface OpenAIProviderOptions {
  /**
   * Which OpenAI API to speak: `"chat"` (default), Chat Completions, which every
   * OpenAI-compatible server has; or `"responses"`, the Responses API (`POST /responses`, what
   * OpenAI's own Agents SDK uses), which returns reasoning items that go back with the turn, and
   * usage with reasoning tokens. The Responses API has no stop sequences (a request with `stop`
   * fails with `provider_bad_request`) and no `seed` (not sent); `maxTokensField` does not apply
   * (it sends `max_output_tokens`).
   */
  readonly api?: "chat" | "responses";
  /**
   * API key, or a reference to one (`secret("OPENAI_API_KEY")`), resolved before every request
   * from `secrets` (else the process-wide secret provider) and never kept in the provider.
   * Default: `OPENAI_API_KEY`. Not needed with a custom `baseURL` (sent without `Authorization`).
   */
  readonly apiKey?: string | SecretRef;
  /** Where a secret-reference `apiKey` is resolved (default: the process-wide secret provider, the environment). */
  readonly secrets?: SecretProviderV1;
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

function createClient(options: OpenAIProviderOptions, timeoutMs: number): OpenAI {
  const baseURL = options.baseURL ?? readEnv("OPENAI_BASE_URL");
  // A secret reference is resolved per request (the Authorization header of each call); the
  // client only ever holds a placeholder.
  const apiKey = isSecretRef(options.apiKey)
    ? "resolved-per-request"
    : (options.apiKey ?? readEnv("OPENAI_API_KEY"));
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
 * A model provider for OpenAI Chat Completions, or the Responses API with `api: "responses"`,
 * through the official `openai` SDK. Chat Completions works with any OpenAI-compatible server
 * (vLLM, Ollama, LiteLLM, OpenRouter, Azure's `/openai/v1`) through `baseURL`. The SDK never
 * retries (`maxRetries: 0`): wrap calls in core's `callProvider` or `streamProvider`, which retry
 * transient `ProviderError`s and honour `retry-after`.
 *
 * Streams yield text and tool-call deltas as they arrive and end with one `response` event equal
 * to what `complete` returns (Chat Completions streams ask for `stream_options: { include_usage:
 * true }`). A refusal becomes the reply's text with finish reason `content_filter`. With the
 * Responses API, a turn with reasoning comes back with one `reasoning` item holding the turn's
 * output items, which goes back in place on later requests.
 *
 * @throws {OpenRathError} `invalid_argument` for a bad or unknown option (checked by its schema:
 *   the message names each bad field, never showing a key or a header), and when there is no
 *   model (`options.model` or `OPENAI_MODEL`) or no API key and no base URL.
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
export function openaiProvider(given: OpenAIProviderOptions = {}): ProviderV1 {
  const options: OpenAIProviderOptions = checkOptions(OpenAIProviderOptionsSchema, given, {
    backend: "openaiProvider",
    secrets: ["headers"],
  });
  const model = options.model ?? readEnv("OPENAI_MODEL");
  if (!model) {
    throw new OpenRathError(
      "invalid_argument",
      'openaiProvider needs a model: pass { model: "gpt-4o-mini" } (or any model your server serves) or set OPENAI_MODEL.',
      { details: { option: "model" } },
    );
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const client = options.client ?? createClient(options, timeoutMs);
  const ref = !options.client && isSecretRef(options.apiKey) ? options.apiKey : undefined;
  const settings: CallSettings = {
    client,
    baseURL: client.baseURL,
    timeoutMs,
    ...(ref
      ? {
          auth: async (signal: AbortSignal | undefined) => ({
            Authorization: `Bearer ${await resolveSecret(ref, { secrets: options.secrets, ...(signal ? { signal } : {}) })}`,
          }),
        }
      : {}),
  };
  const api =
    options.api === "responses" ? responsesApi(settings, options, model) : chatApi(settings, options, model);
  return { specVersion: "v1", name: "openai", model, complete: api.complete, stream: api.stream };
}
