import { OpenRathError, type OpenRathErrorOptions } from "@openrath/core";

/**
 * Artifact error codes. Every code is stable; match on it, not on the message.
 *
 * - `invalid_argument`: an option or body of the wrong type or range.
 * - `invalid_tenant`: a tenant id that is not 1–128 of `A-Z a-z 0-9 _ . -`, starting with a letter
 *   or digit.
 * - `invalid_digest`: a digest that is not 64 lower-case hexadecimal characters (SHA-256).
 * - `artifact_not_found`: no object under that tenant and digest (never written, deleted, or
 *   removed behind the store's back).
 * - `artifact_corrupt`: the stored bytes do not hash to the digest they are stored under. Raised
 *   on read; the bytes are never handed out as a successful read.
 * - `artifact_digest_mismatch`: a put whose content does not match the digest or size the caller
 *   declared, or whose bytes the server saw damaged in transit (then `retryable`).
 * - `artifact_too_large`: content above the store's `capabilities.maxBytes`.
 * - `artifact_source_failed`: the body the caller handed to `put` failed while it was read (the
 *   cause is the body's error).
 * - `artifact_unavailable`: the store cannot be reached or answered with a transient failure
 *   (connection refused or reset, 5xx, throttling). Always `retryable`.
 * - `artifact_denied`: the store refused the credentials or the permission.
 * - `artifact_backend_error`: any other failure reported by the backing service (a missing bucket,
 *   a request it rejects); the cause carries the service's own error.
 * - `artifact_aborted`: the caller's AbortSignal fired.
 * - `artifact_closed`: the store was closed.
 */
export type ArtifactErrorCode =
  | "invalid_argument"
  | "invalid_tenant"
  | "invalid_digest"
  | "artifact_not_found"
  | "artifact_corrupt"
  | "artifact_digest_mismatch"
  | "artifact_too_large"
  | "artifact_source_failed"
  | "artifact_unavailable"
  | "artifact_denied"
  | "artifact_backend_error"
  | "artifact_aborted"
  | "artifact_closed";

/** Options of {@link ArtifactError}. */
export interface ArtifactErrorOptions extends OpenRathErrorOptions {
  /**
   * Whether the same call may succeed when repeated (default: true for `artifact_unavailable`,
   * false otherwise).
   */
  readonly retryable?: boolean;
}

/**
 * An error raised by an artifact store. `details` names the `tenant` and the `digest` involved
 * whenever there is one, so an operator can find the object, and repeats `retryable`.
 */
export class ArtifactError extends OpenRathError {
  declare readonly code: ArtifactErrorCode;
  /** Whether repeating the same call may succeed (a transient outage, a damaged transfer). */
  readonly retryable: boolean;

  constructor(code: ArtifactErrorCode, message: string, options: ArtifactErrorOptions = {}) {
    const retryable = options.retryable ?? code === "artifact_unavailable";
    // Also in details, where the durable runtime reads a step error's retryability.
    super(code, message, { ...options, details: { ...options.details, retryable } });
    this.retryable = retryable;
  }
}
