import { OpenRathError, SandboxError, type SandboxErrorCode } from "@openrath/core";

/** What a failed HTTP exchange with OpenSandbox said, whatever shape its error body had. */
export interface RemoteFailure {
  /** HTTP status, or undefined when no response came back. */
  readonly status?: number;
  /** The server's error code (`DOCKER::SANDBOX_NOT_FOUND`, `FILE_NOT_FOUND`, …) when it sent one. */
  readonly code?: string;
  /** The server's message (or the FastAPI validation errors, or execd's auth `error`). */
  readonly message: string;
  /** `X-Request-ID` of the lifecycle response, for the server's logs. */
  readonly requestId?: string;
  /** The node error code of a transport failure (`ECONNREFUSED`, `UND_ERR_SOCKET`, …). */
  readonly transport?: string;
}

const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ETIMEDOUT",
]);

/**
 * Reads an error body in any of the three shapes OpenSandbox uses: the lifecycle's and execd's
 * `{code, message}`, FastAPI's 422 `{detail: [...]}`, and execd's auth `{error}`.
 */
export function describeBody(body: unknown): { code?: string; message?: string } {
  let value = body;
  if (typeof value === "string") {
    const text = value.trim();
    if (text === "") return {};
    try {
      value = JSON.parse(text);
    } catch {
      return { message: text.length > 500 ? `${text.slice(0, 497)}...` : text };
    }
  }
  if (typeof value !== "object" || value === null) return {};
  const v = value as Record<string, unknown>;
  if (Array.isArray(v.detail)) {
    const parts = v.detail.map((d) => {
      const item = d as { loc?: unknown[]; msg?: unknown };
      const loc = Array.isArray(item.loc) ? item.loc.join(".") : "";
      return loc ? `${loc}: ${String(item.msg ?? "")}` : String(item.msg ?? "");
    });
    return { code: "VALIDATION_ERROR", message: parts.join("; ") };
  }
  if (typeof v.detail === "string") return { message: v.detail };
  if (typeof v.error === "string" && v.code === undefined) return { message: v.error };
  return {
    ...(typeof v.code === "string" && v.code !== "" ? { code: v.code } : {}),
    ...(typeof v.message === "string" && v.message !== "" ? { message: v.message } : {}),
  };
}

/** Normalizes what the SDK, `fetch` or our own code threw into a {@link RemoteFailure}. */
export function remoteFailure(error: unknown): RemoteFailure {
  const e = error as {
    name?: string;
    message?: string;
    statusCode?: number;
    rawBody?: unknown;
    requestId?: string;
    error?: { code?: string; message?: string };
    cause?: unknown;
  };
  if (e && typeof e === "object" && typeof e.statusCode === "number") {
    const body = describeBody(e.rawBody);
    const sdkCode = e.error?.code && e.error.code !== "UNEXPECTED_RESPONSE" ? e.error.code : undefined;
    return {
      status: e.statusCode,
      message: body.message ?? e.message ?? `HTTP ${e.statusCode}`,
      ...((body.code ?? sdkCode) ? { code: body.code ?? sdkCode } : {}),
      ...(e.requestId ? { requestId: e.requestId } : {}),
    };
  }
  let cause: unknown = error;
  for (let depth = 0; depth < 5 && cause; depth++) {
    const c = cause as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof c.code === "string" && (c.code.startsWith("E") || c.code.startsWith("UND_"))) {
      return { message: String(c.message ?? c.code), transport: c.code };
    }
    cause = c.cause;
  }
  const message = e?.message ?? String(error);
  if (/timed out/i.test(message)) return { message, transport: "ETIMEDOUT" };
  return { message, transport: "UNKNOWN" };
}

/** Whether a failure means "no answer" (server down, wrong host) rather than a broken exchange. */
export function isUnreachable(failure: RemoteFailure): boolean {
  return (
    failure.status === undefined && failure.transport !== undefined && UNREACHABLE.has(failure.transport)
  );
}

/** The `[code] message (request id)` part of an error message. */
export function explain(failure: RemoteFailure): string {
  const status =
    failure.status !== undefined ? `HTTP ${failure.status}` : (failure.transport ?? "no response");
  const code = failure.code ? ` ${failure.code}` : "";
  const id = failure.requestId ? ` (request ${failure.requestId})` : "";
  return `${status}${code}: ${failure.message}${id}`;
}

/** Facts for an error's `details`. */
export function failureDetails(failure: RemoteFailure): Record<string, unknown> {
  return {
    ...(failure.status !== undefined ? { status: failure.status } : {}),
    ...(failure.code ? { remoteCode: failure.code } : {}),
    remoteMessage: failure.message,
    ...(failure.requestId ? { requestId: failure.requestId } : {}),
    ...(failure.transport ? { transport: failure.transport } : {}),
  };
}

/**
 * The SandboxError for a failed call: `sandbox_unavailable` when nothing answered,
 * `sandbox_transport` when the exchange broke, otherwise `fallback` (usually
 * `sandbox_remote_error`). 401s get a hint about the credentials.
 */
export function toSandboxError(
  error: unknown,
  what: string,
  fallback: SandboxErrorCode = "sandbox_remote_error",
  extra: Record<string, unknown> = {},
): SandboxError {
  if (OpenRathError.isInstance(error)) return error as SandboxError;
  const failure = remoteFailure(error);
  const details = { ...extra, ...failureDetails(failure) };
  if (isUnreachable(failure)) {
    return new SandboxError(
      "sandbox_unavailable",
      `${what} failed: OpenSandbox could not be reached (${explain(failure)}). Check that the server runs and that the domain (option "domain" or OPEN_SANDBOX_DOMAIN) points at it.`,
      { cause: error, details },
    );
  }
  if (failure.status === undefined) {
    return new SandboxError(
      "sandbox_transport",
      `${what} failed: the connection broke (${explain(failure)}).`,
      {
        cause: error,
        details,
      },
    );
  }
  if (failure.status === 401 || failure.status === 403) {
    const hint =
      failure.code === "MISSING_API_KEY" || failure.code === "INVALID_API_KEY"
        ? ' Pass the right key as option "apiKey" or set OPEN_SANDBOX_API_KEY.'
        : ' If execd requires an access token, pass it as option "execdAccessToken".';
    return new SandboxError(fallback, `${what} was refused: ${explain(failure)}.${hint}`, {
      cause: error,
      details,
    });
  }
  return new SandboxError(fallback, `${what} failed: ${explain(failure)}.`, { cause: error, details });
}
