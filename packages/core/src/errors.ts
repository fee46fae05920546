const marker = Symbol.for("openrath.error");

/**
 * Stable machine-readable error codes. A code never changes meaning once released; match on it
 * instead of on the message.
 */
export type OpenRathErrorCode =
  | "invalid_argument"
  | "invalid_chunk"
  | "unknown_backend"
  | "backend_clash"
  | "invalid_spec"
  | "merge_conflict"
  | "invalid_session_json"
  | "invalid_session_id"
  | "chunk_not_found"
  | "log_corrupt"
  | "log_locked"
  | "log_exists"
  | "log_conflict"
  | "log_closed"
  | "log_unsupported_version"
  | "log_path_outside_dir"
  | (string & {});

/** Options shared by every OpenRath error. */
export interface OpenRathErrorOptions {
  /** The underlying error, if this one wraps another. */
  cause?: unknown;
  /** Structured facts about the failure (the offending value, the valid choices, a file and line). */
  details?: Readonly<Record<string, unknown>>;
}

/**
 * The base class of every error OpenRath throws. Each carries a stable {@link OpenRathError.code}.
 *
 * Use {@link OpenRathError.isInstance} rather than `instanceof`: two installed copies of
 * `@openrath/core` have two classes, but they share the marker.
 *
 * @example
 * ```ts
 * try { session.merge(other); } catch (e) {
 *   if (OpenRathError.isInstance(e, "merge_conflict")) console.error(e.details);
 * }
 * ```
 */
export class OpenRathError extends Error {
  /** Stable code that names what failed. */
  readonly code: OpenRathErrorCode;
  /** Structured facts about the failure; never required to understand the message. */
  readonly details: Readonly<Record<string, unknown>>;
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: read through the symbol by isInstance, across copies of core.
  private readonly [marker] = true;

  constructor(code: OpenRathErrorCode, message: string, options: OpenRathErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.details = options.details ?? {};
  }

  /**
   * Whether `error` is an OpenRath error (from any installed copy of core), optionally with `code`.
   */
  static isInstance(error: unknown, code?: OpenRathErrorCode): error is OpenRathError {
    return (
      typeof error === "object" &&
      error !== null &&
      (error as Record<symbol, unknown>)[marker] === true &&
      (code === undefined || (error as OpenRathError).code === code)
    );
  }
}

/** A backend key that no registry entry answers to (code `unknown_backend`). */
export class UnknownBackendError extends OpenRathError {}

/** A second, different backend registered under a key that is already taken (code `backend_clash`). */
export class BackendClashError extends OpenRathError {}

/** Two sessions that cannot be merged, such as sessions placed on different backends (code `merge_conflict`). */
export class MergeConflictError extends OpenRathError {}

/** A session log that cannot be written or read back faithfully (codes `log_*`). */
export class SessionLogError extends OpenRathError {}
