import { OpenRathError } from "@openrath/core";
import { z } from "zod";

/**
 * Codes the server adds to the runtime's (`run_not_found`, `session_busy`, ... keep their own
 * code). A code never changes meaning once released.
 *
 * - `invalid_request`: the request does not match its schema (body, query, path, headers).
 * - `unauthenticated`: no credentials, or credentials that are unknown, expired or revoked.
 * - `forbidden`: the credentials lack the grant the action needs.
 * - `not_found`: no such route, or an object the caller may not see (another tenant's or
 *   project's object is not found, never forbidden).
 * - `payload_too_large`: the body is over the server's limit.
 * - `rate_limited`: the tenant sent more requests than its limit allows; retry after the
 *   `Retry-After` header.
 * - `unavailable`: a dependency the request needs is down (the store); retryable.
 * - `internal`: a fault of the server; the message says nothing about its internals.
 */
export type ServerErrorCode =
  | "invalid_request"
  | "unauthenticated"
  | "forbidden"
  | "not_found"
  | "payload_too_large"
  | "rate_limited"
  | "unavailable"
  | "internal";

/** An error a route answers with: a stable code, an HTTP status and a message for people. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** The one error body of every route: `{ error: { code, message, requestId, details? } }`. */
export const ErrorEnvelope = z
  .object({
    error: z.object({
      code: z.string().describe("A stable code, such as `run_not_found` or `forbidden`."),
      message: z.string(),
      requestId: z.string().describe("The request's id, as in the `X-Request-ID` header."),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
  })
  .meta({ id: "Error" });

/** HTTP status of each runtime code; codes not listed are 500. */
const STATUS_OF: Readonly<Record<string, number>> = {
  invalid_argument: 400,
  invalid_definition: 400,
  invalid_decision: 400,
  unknown_plan: 404,
  run_not_found: 404,
  effect_not_found: 404,
  interrupt_not_found: 404,
  invalid_cron: 400,
  schedule_not_found: 404,
  webhook_not_found: 404,
  idempotency_conflict: 409,
  session_busy: 409,
  invalid_transition: 409,
  version_conflict: 409,
  plan_conflict: 409,
  effect_not_under_review: 409,
  effects_under_review: 409,
  interrupt_decided: 409,
  effect_conflict: 409,
  invalid_digest: 400,
  invalid_tenant: 400,
  invalid_scope: 400,
  artifact_not_found: 404,
  artifact_unavailable: 503,
  not_supported: 501,
  store_unavailable: 503,
  memory_unavailable: 503,
  store_locked: 503,
  runtime_closed: 503,
  schema_mismatch: 503,
};

/** The envelope and status for anything a route threw. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof OpenRathError) {
    const status = STATUS_OF[error.code] ?? 500;
    if (status === 500) return new ApiError(500, "internal", "The server failed to handle the request.");
    // The runtime's details name ids and statuses only; they are safe to show the caller.
    const details = Object.keys(error.details).length > 0 ? { ...error.details } : undefined;
    return new ApiError(status, error.code, error.message, details);
  }
  return new ApiError(500, "internal", "The server failed to handle the request.");
}

export const notFound = (what: string, id: string, code = "not_found"): ApiError =>
  new ApiError(404, code, `No ${what} ${JSON.stringify(id)}.`);
