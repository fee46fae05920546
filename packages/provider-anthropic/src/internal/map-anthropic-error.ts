import { ProviderError, type ProviderErrorCode } from "@openrath/core";
import { parseRetryAfter } from "@openrath/core/backend";

/** Where a failure happened and what the message should name. */
export interface ErrorContext {
  readonly model: string;
  /** The API base URL, for connection errors. */
  readonly baseURL: string;
  /** The request timeout in milliseconds, for timeout errors. */
  readonly timeoutMs: number | undefined;
  /** `request` until the response (or the stream's first byte) arrived, `stream` while reading events. */
  readonly phase: "request" | "stream";
  readonly signal?: AbortSignal | undefined;
}

type Headers = { get(name: string): string | null };

/** The parts of the SDK's `APIError` read here (duck-typed, so another copy of the SDK works too). */
interface ApiErrorLike {
  readonly name: string;
  readonly message: string;
  readonly status: number | undefined;
  readonly headers: Headers | undefined;
  readonly apiMessage?: string | null;
  readonly type?: string | null;
  readonly requestID?: string | null;
}

/** Anthropic error types and the HTTP status each stands for, for errors sent inside a stream. */
const TYPE_STATUS: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

function isApiError(error: unknown): error is ApiErrorLike {
  if (!(error instanceof Error)) return false;
  const e = error as Error & Record<string, unknown>;
  return "status" in e && "headers" in e && "error" in e;
}

function codeForStatus(status: number): ProviderErrorCode {
  if (status === 429) return "provider_rate_limited";
  if (status === 401 || status === 403) return "provider_auth";
  if (status === 408) return "provider_timeout";
  if (status >= 500) return "provider_unavailable";
  return "provider_bad_request";
}

function describe(code: ProviderErrorCode, model: string, what: string): string {
  switch (code) {
    case "provider_rate_limited":
      return `Anthropic rate-limited the call to model "${model}" (${what}). It is retryable: callProvider waits the server's retry-after; if it keeps happening, lower the request rate or raise the account's limits.`;
    case "provider_unavailable":
      return `Anthropic could not serve model "${model}" right now (${what}). It is transient: retry later (callProvider does).`;
    case "provider_auth":
      return `Anthropic refused the credentials for model "${model}" (${what}). Check the apiKey option or ANTHROPIC_API_KEY, and that the key may use this model.`;
    case "provider_timeout":
      return `Anthropic timed out serving model "${model}" (${what}). Retry, or raise timeoutMs.`;
    default:
      return `Anthropic rejected the request to model "${model}" (${what}). Fix the request; sending it again will not help.`;
  }
}

/**
 * Maps any failure of an SDK call to a {@link ProviderError}: HTTP statuses (429 with
 * `retry-after`/`retry-after-ms`, 401/403, 408, 5xx and 529, other 4xx), `error` events inside a
 * stream (by their error type), connection failures, timeouts, aborts, cut streams and malformed
 * events. A `ProviderError` passes through unchanged.
 */
export function toProviderError(error: unknown, context: ErrorContext): ProviderError {
  const { model, signal } = context;
  const name = error instanceof Error ? error.name : "";
  const message = error instanceof Error ? error.message : String(error);

  // Checked first: an aborted stream ends early, which would otherwise read as a cut stream.
  if (signal?.aborted || name === "APIUserAbortError" || name === "AbortError") {
    if (ProviderError.isInstance(error, "aborted")) return error as ProviderError;
    return new ProviderError("aborted", `The call to Anthropic model "${model}" was aborted.`, {
      cause: signal?.aborted ? signal.reason : error,
      retryable: false,
    });
  }
  if (ProviderError.isInstance(error)) return error as ProviderError;
  if (name === "APIConnectionTimeoutError") {
    const after = context.timeoutMs === undefined ? "" : ` after ${context.timeoutMs} ms`;
    return new ProviderError(
      "provider_timeout",
      `The call to Anthropic model "${model}" got no response${after}. Retry, or raise timeoutMs.`,
      { cause: error },
    );
  }
  if (name === "APIConnectionError") {
    const cause = (error as Error).cause;
    const reason = cause instanceof Error ? `${cause.message}${causeCode(cause)}` : message;
    return new ProviderError(
      "provider_connection",
      `Could not reach the Anthropic API at ${context.baseURL} for model "${model}": ${reason}. Check the baseURL option or ANTHROPIC_BASE_URL and the network; the call is retryable.`,
      { cause: error },
    );
  }

  if (isApiError(error)) {
    const type = error.type ?? undefined;
    const serverMessage = error.apiMessage ?? error.message;
    const details = { type, requestId: error.requestID ?? undefined };
    if (error.status !== undefined) {
      const code = codeForStatus(error.status);
      const retryAfterMs =
        code === "provider_rate_limited" || code === "provider_unavailable"
          ? parseRetryAfter(error.headers)
          : undefined;
      const what = `HTTP ${error.status}${type ? ` ${type}` : ""}: ${serverMessage}`;
      return new ProviderError(code, describe(code, model, what), {
        cause: error,
        status: error.status,
        details,
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      });
    }
    // An `error` event inside a 200 stream: classify it by its type.
    const status = type === undefined ? undefined : TYPE_STATUS[type];
    if (status === undefined) {
      return new ProviderError(
        "provider_stream",
        `The Anthropic stream for model "${model}" sent an error event${type ? ` of type ${type}` : ""}: ${serverMessage}. Retry the call.`,
        { cause: error, status: 200, details },
      );
    }
    const code = codeForStatus(status);
    return new ProviderError(
      code,
      describe(code, model, `error event in the stream, ${type}: ${serverMessage}`),
      { cause: error, status, details },
    );
  }

  if (/authentication method|credential/i.test(message)) {
    return new ProviderError(
      "provider_auth",
      `No credentials for Anthropic model "${model}": ${message}. Pass the apiKey option or set ANTHROPIC_API_KEY.`,
      { cause: error },
    );
  }

  if (name === "AnthropicError" && context.phase === "request") {
    // The SDK refused the request before sending it (such as a non-streaming call whose
    // max_tokens could take longer than its time limit).
    return new ProviderError(
      "provider_bad_request",
      `The Anthropic SDK refused the call to model "${model}": ${message}`,
      { cause: error },
    );
  }

  if (context.phase === "stream") {
    if (error instanceof SyntaxError) {
      return new ProviderError(
        "provider_stream",
        `The Anthropic stream for model "${model}" sent an event that is not valid JSON (${message}). The server or a proxy in between is broken; retrying may help.`,
        { cause: error, retryable: false, status: 200 },
      );
    }
    return new ProviderError(
      "provider_stream",
      `The Anthropic stream for model "${model}" broke off before it finished: ${message}${causeCode(error)}. Retry the call.`,
      { cause: error, retryable: true, status: 200 },
    );
  }
  if (error instanceof SyntaxError) {
    return new ProviderError(
      "provider_response",
      `Anthropic answered the call to model "${model}" with a body that is not valid JSON (${message}). Check that the baseURL points at the Messages API.`,
      { cause: error, status: 200 },
    );
  }
  if (error instanceof TypeError) {
    // undici reports a connection dropped while reading a body as a TypeError ("terminated"); the
    // SDK wraps failures before the response in APIConnectionError, so this came after a 2xx.
    return new ProviderError(
      "provider_connection",
      `The connection to the Anthropic API at ${context.baseURL} dropped during the call to model "${model}": ${message}${causeCode(error)}. The call is retryable.`,
      { cause: error, status: 200 },
    );
  }
  return new ProviderError(
    "provider_response",
    `The call to Anthropic model "${model}" failed unexpectedly: ${message}`,
    { cause: error },
  );
}

function causeCode(error: unknown): string {
  const cause =
    error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  if (cause && typeof cause === "object") {
    if (typeof cause.code === "string") return ` (${cause.code})`;
    if (typeof cause.message === "string") return ` (${cause.message})`;
  }
  return "";
}
