import { DurableError } from "./durable-error.js";

/**
 * The status of a run. `queued` waits for a worker; `running` is held by a worker's lease;
 * `waiting` (an interrupt) and `needs_review` (an ambiguous effect) are parked: no lease, no worker,
 * resumed by a decision. The other four are terminal and never change again.
 */
export type RunStatus =
  | "queued"
  | "running"
  | "waiting"
  | "succeeded"
  | "failed"
  | "cancelled"
  | "timed_out"
  | "needs_review";

/** Every status, in a stable order. */
export const RUN_STATUSES: readonly RunStatus[] = Object.freeze([
  "queued",
  "running",
  "waiting",
  "succeeded",
  "failed",
  "cancelled",
  "timed_out",
  "needs_review",
]);

/** The terminal statuses: a run in one of them is immutable. */
export const TERMINAL_STATUSES: readonly RunStatus[] = Object.freeze([
  "succeeded",
  "failed",
  "cancelled",
  "timed_out",
]);

/** The statuses that occupy a session's one active slot. */
export const ACTIVE_STATUSES: readonly RunStatus[] = Object.freeze([
  "queued",
  "running",
  "waiting",
  "needs_review",
]);

/**
 * The one transition table. Every status change a store makes is checked against it (stores
 * also encode it in their SQL guards, and the conformance suite proves the two agree).
 *
 * - queued → running (claim), cancelled, timed_out (deadline sweep), failed (a run that cannot
 *   start, such as a corrupt input checkpoint).
 * - running → queued (lease expiry, retry scheduled, graceful release), waiting (interrupt),
 *   needs_review (ambiguous effect), succeeded, failed, cancelled, timed_out.
 * - waiting → queued (decision), timed_out, cancelled, failed.
 * - needs_review → queued (resolved), cancelled, failed.
 */
export const TRANSITIONS: Readonly<Record<RunStatus, readonly RunStatus[]>> = Object.freeze({
  queued: ["running", "cancelled", "timed_out", "failed"],
  running: ["queued", "waiting", "needs_review", "succeeded", "failed", "cancelled", "timed_out"],
  waiting: ["queued", "timed_out", "cancelled", "failed"],
  needs_review: ["queued", "cancelled", "failed"],
  succeeded: [],
  failed: [],
  cancelled: [],
  timed_out: [],
});

/** Whether `status` is terminal. */
export function isTerminal(status: RunStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

/** Whether the table allows `from → to`. */
export function canTransition(from: RunStatus, to: RunStatus): boolean {
  return TRANSITIONS[from]?.includes(to) ?? false;
}

/** The statuses from which `to` can be reached: what a store's guarded `UPDATE` lists. */
export function sourcesOf(to: RunStatus): RunStatus[] {
  return RUN_STATUSES.filter((from) => canTransition(from, to));
}

/**
 * Throws unless the table allows `from → to`.
 *
 * @throws {DurableError} code `invalid_transition` naming both statuses and the allowed targets.
 */
export function assertTransition(from: RunStatus, to: RunStatus, runId?: string): void {
  if (canTransition(from, to)) return;
  const allowed = TRANSITIONS[from] ?? [];
  throw new DurableError(
    "invalid_transition",
    `Run ${runId ?? ""} cannot go from "${from}" to "${to}"; ${
      allowed.length === 0 ? `"${from}" is terminal` : `from "${from}" it can go to ${allowed.join(", ")}`
    }.`.replace("Run  ", "A run "),
    { details: { runId, from, to, allowed } },
  );
}
