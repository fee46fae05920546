import { MemoryError, OpenRathError } from "@openrath/core";
import { OpenVikingHttpError } from "./http-client.js";

/** Whether `error` is the server saying NOT_FOUND (404 or an envelope with that code). */
export function isNotFound(error: unknown): boolean {
  return error instanceof OpenVikingHttpError && (error.code === "NOT_FOUND" || error.status === 404);
}

/** Whether `error` is the server saying the thing already exists (409 ALREADY_EXISTS). */
export function isAlreadyExists(error: unknown): boolean {
  return error instanceof OpenVikingHttpError && error.code === "ALREADY_EXISTS";
}

/**
 * Whether a batch-write failed because its root directory does not exist yet (the server says
 * INVALID_ARGUMENT "…must be an existing directory…", or NOT_FOUND for the root).
 */
export function isMissingRoot(error: unknown): boolean {
  return (
    error instanceof OpenVikingHttpError &&
    ((error.code === "INVALID_ARGUMENT" && /existing directory/.test(error.message)) || isNotFound(error))
  );
}

/**
 * Envelope codes that mean "try again later": the server or a model behind it is unavailable
 * (503), too slow (504), rate limiting (429), or a concurrent write won (409 ABORTED,
 * WRITE_CONFLICT). They map to `memory_unavailable` with `details.retryable: true`.
 */
const RETRYABLE = new Set([
  "UNAVAILABLE",
  "MODEL_UNAVAILABLE",
  "NO_VECTOR_DB",
  "NOT_INITIALIZED",
  "DEADLINE_EXCEEDED",
  "RESOURCE_EXHAUSTED",
  "ABORTED",
  "WRITE_CONFLICT",
]);

/** Facts for a MemoryError's `details`. */
function details(error: OpenVikingHttpError, extra: Record<string, unknown>): Record<string, unknown> {
  return {
    ...extra,
    method: error.method,
    path: error.path,
    ...(error.status !== undefined ? { status: error.status } : {}),
    ...(error.code !== undefined ? { remoteCode: error.code } : {}),
    remoteMessage: error.message,
    ...(error.remoteDetails !== undefined && error.remoteDetails !== null
      ? { remoteDetails: error.remoteDetails }
      : {}),
    ...(error.transport !== undefined ? { transport: error.transport } : {}),
  };
}

/**
 * The MemoryError for a failed call:
 * - no answer (refused, timed out, connection dropped), a gateway's bare 502/503/504, or an
 *   envelope saying UNAVAILABLE, MODEL_UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED
 *   or WRITE_CONFLICT (503, 504, 429, 409) → `memory_unavailable`, `details.retryable: true`;
 * - 401 `UNAUTHENTICATED`, 403 `PERMISSION_DENIED` → `memory_unauthorized`;
 * - 404 `NOT_FOUND` → `memory_not_found`;
 * - anything else (4xx, 5xx) → `memory_remote_error`, carrying the server's code and message.
 * Errors that already are OpenRath errors pass through.
 */
export function toMemoryError(
  error: unknown,
  what: string,
  baseUrl: string,
  extra: Record<string, unknown> = {},
) {
  if (OpenRathError.isInstance(error)) return error;
  if (!(error instanceof OpenVikingHttpError)) {
    return new MemoryError(
      "memory_remote_error",
      `${what} failed: ${(error as Error)?.message ?? String(error)}.`,
      {
        cause: error,
        details: extra,
      },
    );
  }
  const d = details(error, { ...extra, url: baseUrl });
  const where = `${error.method} ${error.path}`;
  if (error.status === undefined) {
    const why =
      error.transport === "timeout"
        ? `OpenViking at ${baseUrl} did not answer ${where} in time (${error.message})`
        : `OpenViking at ${baseUrl} could not be reached for ${where}: ${error.message}`;
    return new MemoryError(
      "memory_unavailable",
      `${what} failed: ${why}. Check that openviking-server runs and that the url (option "url" or OPENVIKING_URL) points at it; raise option "requestTimeoutMs" for a slow server.`,
      { cause: error, details: d },
    );
  }
  if (!error.enveloped && (error.status === 502 || error.status === 503 || error.status === 504)) {
    return new MemoryError(
      "memory_unavailable",
      `${what} failed: a gateway in front of OpenViking at ${baseUrl} answered HTTP ${error.status} for ${where} (${error.message}). Try again later.`,
      { cause: error, details: { ...d, retryable: true } },
    );
  }
  if (error.code !== undefined && RETRYABLE.has(error.code)) {
    return new MemoryError(
      "memory_unavailable",
      `${what} failed: OpenViking at ${baseUrl} answered HTTP ${error.status} ${error.code}: ${error.message}. The call can be retried later.`,
      { cause: error, details: { ...d, retryable: true } },
    );
  }
  const code = error.code ? `${error.code}: ` : "";
  if (
    error.status === 401 ||
    error.status === 403 ||
    error.code === "UNAUTHENTICATED" ||
    error.code === "PERMISSION_DENIED"
  ) {
    return new MemoryError(
      "memory_unauthorized",
      `${what} was refused by OpenViking (HTTP ${error.status} ${code}${error.message}). Pass a user API key as option "apiKey" or set OPENVIKING_API_KEY; a ROOT key cannot read or write tenant data.`,
      { cause: error, details: d },
    );
  }
  if (error.status === 404 || error.code === "NOT_FOUND") {
    return new MemoryError(
      "memory_not_found",
      `${what} failed: OpenViking answered HTTP 404 ${code}${error.message}.`,
      {
        cause: error,
        details: d,
      },
    );
  }
  return new MemoryError(
    "memory_remote_error",
    `${what} failed: OpenViking answered HTTP ${error.status} ${code}${error.message}.`,
    { cause: error, details: d },
  );
}
