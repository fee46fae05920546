import { ProviderError, type ProviderErrorCode } from "@openrath/core";
import { parseRetryAfter } from "@openrath/core/backend";
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  OpenAIError,
} from "openai";

/** What the provider knew when the call failed. */
export interface ErrorContext {
  /** The model the request named. */
  readonly model: string;
  readonly baseURL: string;
  /** The caller's signal: when it aborted, every failure is an abort. */
  readonly signal: AbortSignal | undefined;
  /** Whether the provider's own deadline ended the call. */
  readonly timedOut: boolean;
  readonly timeoutMs: number;
  /** `stream` while reading a streamed body, `request` before that or for `complete`. */
  readonly phase: "request" | "stream";
  /** Whether a delta already reached the caller (a retry would repeat it). */
  readonly started: boolean;
}

/** The `aborted` error for a call the caller cancelled. */
export function abortedError(model: string, signal: AbortSignal | undefined, cause?: unknown): ProviderError {
  return new ProviderError("aborted", `The call to model "${model}" was aborted by its AbortSignal.`, {
    cause: cause ?? signal?.reason,
    retryable: false,
    details: { model },
  });
}

/** The `provider_timeout` error for a call that heard nothing for `timeoutMs`. */
export function timeoutError(context: ErrorContext, cause?: unknown): ProviderError {
  return new ProviderError(
    "provider_timeout",
    `Model "${context.model}" at ${context.baseURL} sent nothing for ${context.timeoutMs} ms. Raise timeoutMs or retry later.`,
    { cause, details: { model: context.model, baseURL: context.baseURL, timeoutMs: context.timeoutMs } },
  );
}

function serverMessage(error: APIError): string {
  const body = error.error as { message?: unknown } | undefined;
  if (typeof body?.message === "string" && body.message !== "") return body.message;
  return error.message;
}

function details(error: APIError, context: ErrorContext): Record<string, unknown> {
  const out: Record<string, unknown> = { model: context.model, baseURL: context.baseURL };
  if (error.status !== undefined) out.status = error.status;
  if (error.type) out.type = error.type;
  if (error.code) out.code = error.code;
  if (error.param) out.param = error.param;
  if (error.requestID) out.requestId = error.requestID;
  return out;
}

function fromStatus(error: APIError & { status: number }, context: ErrorContext): ProviderError {
  const status = error.status;
  const message = serverMessage(error);
  const retryAfterMs = parseRetryAfter(error.headers);
  const shouldRetry = error.headers?.get("x-should-retry");
  const forced = shouldRetry === "true" ? true : shouldRetry === "false" ? false : undefined;
  const where = `model "${context.model}" (HTTP ${status}${error.code ? ` ${error.code}` : ""})`;
  const make = (code: ProviderErrorCode, text: string, retryable?: boolean) =>
    new ProviderError(code, text, {
      cause: error,
      status,
      details: details(error, context),
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      ...((forced ?? retryable) !== undefined ? { retryable: forced ?? retryable } : {}),
    });
  if (status === 429) {
    if (error.code === "insufficient_quota") {
      return make(
        "provider_rate_limited",
        `The OpenAI account has no quota left for ${where}: ${message} Check the plan and billing; retrying will not help.`,
        false,
      );
    }
    const wait = retryAfterMs !== undefined ? `${retryAfterMs} ms, as the server asked,` : "a moment";
    return make(
      "provider_rate_limited",
      `Rate limited on ${where}: ${message} Wait ${wait} or lower the request rate; callProvider retries this on its own.`,
    );
  }
  if (status === 401 || status === 403) {
    return make(
      "provider_auth",
      `The server refused the credentials for ${where}: ${message} Check the API key (options.apiKey or OPENAI_API_KEY) and that it may use this model.`,
    );
  }
  if (status === 408) {
    return make("provider_timeout", `The server timed out the request for ${where}: ${message} Retry later.`);
  }
  if (status >= 500) {
    return make(
      "provider_unavailable",
      `The server failed or is overloaded for ${where}: ${message} Retry later; callProvider retries this on its own.`,
    );
  }
  if (status === 404) {
    return make(
      "provider_bad_request",
      `Not found for ${where}: ${message} Check the model name and the base URL (${context.baseURL}).`,
    );
  }
  if (status >= 400) {
    return make(
      "provider_bad_request",
      `The server rejected the request for ${where}: ${message}${error.param ? ` (parameter \`${error.param}\`)` : ""} Fix the request; retrying it unchanged will fail again.`,
    );
  }
  return make(
    "provider_response",
    `Unexpected HTTP ${status} for ${where}: ${message} Check that the base URL (${context.baseURL}) is an OpenAI-compatible endpoint.`,
  );
}

/** An `error` object sent inside a stream (no HTTP status): classified by its `type` and `code`. */
function fromStreamErrorEvent(error: APIError, context: ErrorContext): ProviderError {
  const kind = `${error.type ?? ""} ${error.code ?? ""}`.toLowerCase();
  const message = serverMessage(error);
  // After output reached the caller nothing is retryable: a retry would repeat what it has seen.
  const opts = {
    cause: error,
    details: details(error, context),
    ...(context.started ? { retryable: false } : {}),
  };
  const where = `model "${context.model}"`;
  const delivered = context.started ? " Part of the reply was already streamed, so it is not retried." : "";
  if (kind.includes("rate_limit")) {
    return new ProviderError(
      "provider_rate_limited",
      `Rate limited mid-stream on ${where}: ${message} Lower the request rate or retry later.${delivered}`,
      opts,
    );
  }
  if (kind.includes("server_error") || kind.includes("overloaded") || kind.includes("unavailable")) {
    return new ProviderError(
      "provider_unavailable",
      `The server failed mid-stream on ${where}: ${message}${delivered || " Retry later."}`,
      opts,
    );
  }
  if (kind.includes("invalid_request")) {
    return new ProviderError(
      "provider_bad_request",
      `The server rejected the request mid-stream on ${where}: ${message} Fix the request; retrying it unchanged will fail again.`,
      opts,
    );
  }
  return new ProviderError(
    "provider_stream",
    `The stream from ${where} carried an error: ${message}${context.started ? "" : " Retry the call."}`,
    {
      ...opts,
      retryable: !context.started,
    },
  );
}

/**
 * Maps anything the SDK (or the network under it) throws to a {@link ProviderError}: HTTP statuses
 * to their codes with `status` and `retryAfterMs`, connection failures and timeouts, a body that is
 * not JSON, a stream cut short or carrying malformed events, and aborts. A `ProviderError` passes
 * through unchanged.
 */
export function toProviderError(error: unknown, context: ErrorContext): ProviderError {
  if (ProviderError.isInstance(error)) return error as ProviderError;
  if (context.signal?.aborted) return abortedError(context.model, context.signal);
  if (context.timedOut || error instanceof APIConnectionTimeoutError) return timeoutError(context, error);
  if (error instanceof APIUserAbortError) return abortedError(context.model, context.signal, error);
  if (error instanceof APIConnectionError) {
    return new ProviderError(
      "provider_connection",
      `Could not reach ${context.baseURL} for model "${context.model}": ${error.message}${error.cause instanceof Error ? ` (${error.cause.message})` : ""}. Check the base URL (options.baseURL or OPENAI_BASE_URL) and the network.`,
      { cause: error, details: { model: context.model, baseURL: context.baseURL } },
    );
  }
  if (error instanceof APIError) {
    return typeof error.status === "number"
      ? fromStatus(error as APIError & { status: number }, context)
      : fromStreamErrorEvent(error, context);
  }
  const info = { model: context.model, baseURL: context.baseURL };
  if (error instanceof SyntaxError) {
    return context.phase === "stream"
      ? new ProviderError(
          "provider_stream",
          `The stream from model "${context.model}" carried an event whose data is not JSON (${error.message}). The server at ${context.baseURL} is not speaking the Chat Completions stream format.`,
          { cause: error, retryable: false, details: info },
        )
      : new ProviderError(
          "provider_response",
          `The reply for model "${context.model}" is not JSON (${error.message}). Check that the base URL (${context.baseURL}) is an OpenAI-compatible endpoint.`,
          { cause: error, details: info },
        );
  }
  if (error instanceof OpenAIError) {
    return new ProviderError(
      "provider_response",
      `The reply for model "${context.model}" could not be used: ${error.message}`,
      { cause: error, details: info },
    );
  }
  const reason = error instanceof Error ? error.message : String(error);
  if (context.phase === "stream") {
    return new ProviderError(
      "provider_stream",
      `The stream from model "${context.model}" was cut before it finished (${reason}).${context.started ? " Its partial output was already delivered, so it is not retried." : " Retry the call."}`,
      { cause: error, retryable: !context.started, details: info },
    );
  }
  return new ProviderError(
    "provider_connection",
    `The connection to ${context.baseURL} for model "${context.model}" failed (${reason}). Check the base URL and the network, then retry.`,
    { cause: error, details: info },
  );
}
