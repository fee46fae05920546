import type { ToolOutcome } from "@openrath/core";
import type { Audited } from "./access.js";
import type { EffectInput, EffectRecord, EffectResolutionInput, ListEffectsQuery } from "./effect-records.js";
import type {
  DecisionInput,
  InterruptInput,
  InterruptRecord,
  JournaledInterrupt,
  ListInterruptsQuery,
} from "./interrupt-records.js";
import type { JournalEntryInput, Page, StepJournalState } from "./journal-records.js";
import type { Fence, RunRecord } from "./run-records.js";

/**
 * The store members of the step journal, the effect ledger and interrupts (version 1), found at
 * `store.journal` when `store.capabilities.journal` is true. Every worker write takes the
 * {@link Fence} of the lease it runs under and follows the run store's fenced-write rule: one
 * statement (or transaction) guarded by `status = 'running'`, the token, the holder and the
 * database clock; zero rows is `stale_fence` and nothing changes. Operator writes (decisions,
 * resolutions) change the run's status with the transition table's guards and append their event
 * in the same transaction. Proven by `@openrath/testing/store` (journal, effects and interrupts groups).
 *
 * Errors are `DurableError`s: `stale_fence`, `run_not_found`, `journal_conflict`, `effect_conflict`, `effect_not_found`,
 * `effect_not_under_review`, `interrupt_not_found`, `interrupt_decided`, `invalid_decision`,
 * `invalid_transition`, `invalid_argument`.
 */
export interface JournalStoreV1 {
  readonly specVersion: "v1";

  /**
   * Opens a step attempt: the visit (the run's checkpoint sequence), its journal and its
   * interrupts. Fenced; drops the journal of earlier visits (those steps are committed).
   */
  openStep(fence: Fence): Promise<StepJournalState>;
  /**
   * Records completed calls (fenced), in one statement. Recording a position again with the same
   * fingerprint is a no-op; with another one it is `journal_conflict`.
   */
  record(fence: Fence, entries: readonly JournalEntryInput[]): Promise<void>;

  /**
   * Starts an effect (fenced): inserts it `dispatched` under the fence's token, or returns the
   * effect already there — the one with the same idempotency key in the run, or (unkeyed) the one
   * at the same visit and position — untouched, for the caller to judge. `entries` (calls completed
   * before it, such as the model call that asked for this tool) are recorded in the same statement,
   * so no effect is ever dispatched on an answer the journal does not hold.
   *
   * @throws `effect_conflict` when the key is taken by another tool or other arguments.
   */
  beginEffect(
    fence: Fence,
    input: EffectInput,
    entries?: readonly JournalEntryInput[],
  ): Promise<{ readonly effect: EffectRecord; readonly created: boolean }>;
  /**
   * Sends an effect again (fenced): from `prepared` or `failed`, or from `dispatched` under an
   * older token when its class is safe to repeat (`read_only`, keyed `idempotent`).
   *
   * @throws `effect_conflict` for any other state (a succeeded effect, one under review, one in
   *   flight under this token, an ambiguous effect that is not safe to repeat).
   */
  dispatchEffect(fence: Fence, effectId: string): Promise<EffectRecord>;
  /**
   * Records a dispatched effect's outcome (`succeeded` unless `outcome.isError`) and the journal
   * `entries` (the tool call's, and any other completed call not yet recorded), in one statement
   * (fenced; the effect must be dispatched under this token).
   */
  completeEffect(
    fence: Fence,
    effectId: string,
    outcome: ToolOutcome,
    entries: readonly JournalEntryInput[],
  ): Promise<EffectRecord>;
  /**
   * Puts an ambiguous effect (dispatched under an older token) under review and parks the run in
   * `needs_review`, releasing the lease, in one transaction (fenced).
   */
  reviewEffect(fence: Fence, effectId: string): Promise<RunRecord>;

  /**
   * Raises an interrupt and parks the run `waiting`, releasing the lease, in one transaction
   * (fenced). Raising the same position again with the same fingerprint returns the existing one.
   */
  raiseInterrupt(
    fence: Fence,
    input: InterruptInput,
  ): Promise<{ readonly interrupt: InterruptRecord; readonly run: RunRecord }>;

  /** The effect, or `undefined` (also for another tenant's, when `tenantId` is given). */
  getEffect(effectId: string, tenantId?: string): Promise<EffectRecord | undefined>;
  /** Effects of a tenant (default: those under review), oldest first, with a cursor. */
  listEffects(query: ListEffectsQuery): Promise<Page<EffectRecord>>;
  /**
   * Resolves an effect under review: records the resolution and an event on the run and, when no
   * effect of the run is left under review, puts the run back in the queue — in one transaction.
   *
   * @throws `effect_not_found`, `effect_not_under_review` (nothing changes), `invalid_argument`.
   */
  resolveEffect(
    effectId: string,
    resolution: EffectResolutionInput,
    tenantId?: string,
    audited?: Audited,
  ): Promise<{ readonly effect: EffectRecord; readonly run: RunRecord }>;

  /** The interrupt, or `undefined` (also for another tenant's, when `tenantId` is given). */
  getInterrupt(interruptId: string, tenantId?: string): Promise<InterruptRecord | undefined>;
  /** Interrupts of a tenant (default: pending ones), oldest first, with a cursor. */
  listInterrupts(query: ListInterruptsQuery): Promise<Page<InterruptRecord>>;
  /**
   * Decides a pending interrupt (the payload checked against its schema) and puts the waiting run
   * back in the queue, with a `run.interrupt.decided` event, in one transaction.
   *
   * @throws `interrupt_not_found`, `interrupt_decided` (decided or expired already),
   *   `invalid_decision` (bad kind, actor or payload), `invalid_transition` (the run is not
   *   waiting, say cancelled) — nothing changes.
   */
  decideInterrupt(
    interruptId: string,
    decision: DecisionInput,
    tenantId?: string,
    audited?: Audited,
  ): Promise<{ readonly interrupt: InterruptRecord; readonly run: RunRecord }>;
  /**
   * Times out pending interrupts past their expiry (database clock): the declared default is taken
   * as the decision (the run is requeued), or without one the run ends `timed_out`. Safe to call
   * from every worker at once; the store's `sweep()` calls it.
   */
  expireInterrupts(): Promise<{ readonly decided: number; readonly timedOut: number }>;

  /** The visit's interrupts with their positions (the journal's view, for tests and tools). */
  stepInterrupts(runId: string, checkpointSeq: number): Promise<readonly JournaledInterrupt[]>;
}
