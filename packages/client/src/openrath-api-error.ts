const marker = Symbol.for("@openrath/client.OpenRathApiError");

/** What {@link OpenRathApiError} is made from. */
export interface OpenRathApiErrorInit {
  /** The response's HTTP status. */
  readonly status: number;
  /** The server's stable error code. */
  readonly code: string;
  /** What failed, for people. */
  readonly message: string;
  /** The request's id (default null). */
  readonly requestId?: string | null;
  /** Structured facts the server gave. */
  readonly details?: Readonly<Record<string, unknown>>;
  /** The error this one wraps, if any. */
  readonly cause?: unknown;
}

/**
 * An answer of the Agent Server that is not a success: the HTTP status and the server's error
 * envelope (`{ error: { code, message, requestId, details? } }`). The `code` is stable
 * (`run_not_found`, `forbidden`, `invalid_request`, ...); the message is for people. A response
 * without the envelope (a proxy's error page) has the code `unexpected_response`.
 *
 * @example
 * ```ts
 * try {
 *   await client.runs.get("nope");
 * } catch (error) {
 *   if (OpenRathApiError.isInstance(error, "run_not_found")) console.log("no such run");
 *   else throw error;
 * }
 * ```
 */
export class OpenRathApiError extends Error {
  /** The response's HTTP status (200 for an error frame inside an event stream). */
  readonly status: number;
  /** The server's stable error code. */
  readonly code: string;
  /** The request's id (the server's `X-Request-ID`), to find the request in its logs; null if absent. */
  readonly requestId: string | null;
  /** Structured facts the server gave (ids, statuses, validation issues); undefined if none. */
  readonly details: Readonly<Record<string, unknown>> | undefined;
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: read through the symbol by isInstance, across copies of the client.
  private readonly [marker] = true;

  constructor(init: OpenRathApiErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = "OpenRathApiError";
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId ?? null;
    this.details = init.details;
  }

  /** Whether `error` is an OpenRathApiError (from any installed copy of the client), optionally with `code`. */
  static isInstance(error: unknown, code?: string): error is OpenRathApiError {
    return (
      typeof error === "object" &&
      error !== null &&
      (error as Record<symbol, unknown>)[marker] === true &&
      (code === undefined || (error as OpenRathApiError).code === code)
    );
  }
}

/** The longest piece of a body without the envelope that an error message quotes. */
const QUOTED = 200;

/** The error for a failed response, from its envelope when it has one. */
export function errorFromResponse(response: Response, body: unknown): OpenRathApiError {
  const requestId = response.headers.get("x-request-id");
  const envelope = (body as { error?: Record<string, unknown> } | null | undefined)?.error;
  if (envelope && typeof envelope.code === "string" && typeof envelope.message === "string") {
    return new OpenRathApiError({
      status: response.status,
      code: envelope.code,
      message: envelope.message,
      requestId: typeof envelope.requestId === "string" ? envelope.requestId : requestId,
      ...(isRecord(envelope.details) ? { details: envelope.details } : {}),
    });
  }
  const text = typeof body === "string" ? body : JSON.stringify(body ?? "");
  return new OpenRathApiError({
    status: response.status,
    code: "unexpected_response",
    message: `HTTP ${response.status} without the server's error envelope: ${text.slice(0, QUOTED)}`,
    requestId,
  });
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
