import { OpenRathError, type OpenRathErrorOptions } from "@openrath/core";

/**
 * Stable codes of the durable runtime's errors. A code never changes meaning once released.
 *
 * - `invalid_definition`: a workflow definition that does not compile (no or two entries, an unknown
 *   successor, an unreachable node, a router without successors, a step with two successors).
 * - `plan_conflict`: a plan registered under a hash that is already taken by different content.
 * - `unknown_plan`: a run submitted for (or restored with) a plan hash the store does not know.
 * - `idempotency_conflict`: an idempotency key reused with a different request.
 * - `session_busy`: a second active run for a session that already has one.
 * - `run_not_found`: no run with that id (in that tenant).
 * - `invalid_transition`: a status change the transition table forbids (terminal runs never change).
 * - `version_conflict`: a compare-and-set on the run's version lost to another writer.
 * - `stale_fence`: a write carrying a fencing token that is no longer the run's current lease.
 * - `step_not_session`: a step returned something other than a `Session`.
 * - `router_invalid_successor`: a router returned a successor it did not declare.
 * - `corrupt_checkpoint`: a stored checkpoint that cannot be turned back into a Session.
 * - `deadline_exceeded`: the run passed its deadline.
 * - `step_timeout`: a step ran past its hard timeout and was stopped.
 * - `step_failed`: a step threw; the cause is attached.
 * - `cancelled`: the run was cancelled while the step ran.
 * - `lease_lost`: the worker lost the run's lease while the step ran.
 * - `store_unavailable`: the store could not be reached (retryable).
 * - `store_locked`: an embedded database directory is already open in another process (or in this
 *   one); one process at a time.
 * - `schema_mismatch`: the database schema is older than this code needs, or was altered.
 * - `not_supported`: the backend does not have the capability the call needs.
 * - `journal_divergence`: a resumed step asked, at a journaled position, for another call than the
 *   one recorded there (a changed prompt, tool set or code); the run fails closed.
 * - `journal_conflict`: two calls of one step attempt claimed one journal position (a run scope not
 *   shared), or a position recorded twice with different requests.
 * - `run_parked`: the step parked its run (an interrupt, an effect under review); the worker stops
 *   without writing. Never stored as a run's error; also what `runtime.wait` and `runtime.result`
 *   reject with when the run they wait for parks (its details name the interrupts and effects).
 * - `effect_conflict`: an idempotency key reused with another tool or other arguments, or an effect
 *   in a state that forbids the write (in flight, under review, ambiguous and unsafe to repeat).
 * - `effect_not_found` / `effect_not_under_review`: resolving an effect that does not exist or is
 *   not waiting for review.
 * - `effects_under_review`: resuming a run parked for review while some of its effects still wait
 *   for an operator's resolution (resolve them; the run resumes when the last one is).
 * - `invalid_cron`: a schedule's cron expression or time zone that does not parse, or that never
 *   fires.
 * - `schedule_not_found` / `webhook_not_found`: no schedule or webhook with that id (in that tenant).
 * - `interrupt_not_found` / `interrupt_decided`: deciding an interrupt that does not exist, or one
 *   already decided or expired.
 * - `invalid_decision`: a decision with an unknown kind, no actor, or a payload its schema refuses.
 * - `interrupt_timeout`: (a run's error) an interrupt expired without a declared default.
 * - `runtime_closed`: a call on a runtime after `close()`.
 * - `worker_stopping`: (a step signal's reason) the worker is stopping and its drain deadline
 *   passed; the run is handed to another worker.
 */
export type DurableErrorCode =
  | "invalid_definition"
  | "plan_conflict"
  | "unknown_plan"
  | "idempotency_conflict"
  | "session_busy"
  | "run_not_found"
  | "invalid_transition"
  | "version_conflict"
  | "stale_fence"
  | "step_not_session"
  | "router_invalid_successor"
  | "corrupt_checkpoint"
  | "deadline_exceeded"
  | "step_timeout"
  | "step_failed"
  | "cancelled"
  | "lease_lost"
  | "store_unavailable"
  | "store_locked"
  | "schema_mismatch"
  | "not_supported"
  | "invalid_argument"
  | "journal_divergence"
  | "journal_conflict"
  | "run_parked"
  | "effect_conflict"
  | "effect_not_found"
  | "effect_not_under_review"
  | "effects_under_review"
  | "interrupt_not_found"
  | "interrupt_decided"
  | "invalid_decision"
  | "interrupt_timeout"
  | "runtime_closed"
  | "worker_stopping"
  | "invalid_cron"
  | "schedule_not_found"
  | "webhook_not_found";

/** Errors of the durable runtime and its stores; match on {@link DurableError.code}. */
export class DurableError extends OpenRathError {
  declare readonly code: DurableErrorCode;

  constructor(code: DurableErrorCode, message: string, options: OpenRathErrorOptions = {}) {
    super(code, message, options);
  }
}
