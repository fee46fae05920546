import type { CheckpointWrite, Fence, RunRecord, SubmitInput, SubmitResult } from "./run-records.js";
import type { SubmitHooks } from "./run-store.js";

// The run store's fast paths. Each is a capability: `capabilities.<name>` declares it and
// `store.<name>` holds its members, present exactly when it is declared. The plain members of
// `RunStoreV1` do the same work without it; a runtime takes a fast path only where the store
// declares it, and the conformance suite proves both paths on every store that has one.

/**
 * Several step commits of one run in one transaction (`capabilities.groupCommit`): the worker
 * sends the steps that finished while its previous commit was in flight together, so a run of
 * fast steps costs one round trip per batch, not per step. Without it a worker calls
 * `RunStoreV1.commitStep` once per step.
 */
export interface GroupCommitV1 {
  readonly specVersion: "v1";
  /**
   * Commits consecutive steps as `commitStep` would one after another: `checkpoints[0].sequence`
   * is the run's `checkpointSeq + 1` and each next one is one more; a write after the first may be
   * encoded against the one before it (`baseId` `PREVIOUS_CHECKPOINT`). One `run.checkpoint`
   * event per checkpoint, one version bump, all or nothing.
   *
   * @throws `stale_fence` as `commitStep`; `invalid_argument` for an empty batch, a sequence gap or
   *   a first write naming `PREVIOUS_CHECKPOINT`.
   */
  commitSteps(fence: Fence, checkpoints: readonly CheckpointWrite[]): Promise<RunRecord>;
}

/**
 * The submission of a session the store has not seen, in one round trip
 * (`capabilities.newSessionSubmit`). The plain path reads the session's head
 * (`RunStoreV1.findSessionHead`), encodes checkpoint 0 against it and submits: two round trips.
 */
export interface NewSessionSubmitV1 {
  readonly specVersion: "v1";
  /**
   * `RunStoreV1.submit`, but only when none of `sessionIds` (the session's id and its lineage
   * parents') has a checkpoint in the tenant, so a checkpoint 0 encoded without a base loses no
   * sharing; otherwise writes nothing and resolves `undefined`, and the caller takes the plain path.
   *
   * @throws what `submit` throws.
   */
  submitIfNew(
    input: SubmitInput,
    sessionIds: readonly string[],
    hooks?: SubmitHooks,
  ): Promise<SubmitResult | undefined>;
}

/** The worker a submission claims its run for (see {@link ClaimOnSubmitV1}). */
export interface SubmitClaim {
  readonly workerId: string;
  /** The lease's length in milliseconds (> 0). */
  readonly leaseMs: number;
}

/**
 * A submission that creates its run already claimed for a worker, in the submission's own
 * transaction (`capabilities.claimOnSubmit`): the worker starts the run at the commit, with no
 * claim and no `work` signal. The plain path queues the run and a worker claims it
 * (`RunStoreV1.claim`). The runtime takes this path when one of its own workers has a free slot for
 * the plan.
 *
 * The run is created claimed only when a claim could take it at once: it is due, its tenant has no
 * running cap, and no queued run of its plan with as high a priority is due (those go first). It is
 * then `running`, with a lease, a fencing token and a `run.claimed` event, and no `work` signal goes
 * out; otherwise it is queued exactly as by `submit`.
 */
export interface ClaimOnSubmitV1 {
  readonly specVersion: "v1";
  /**
   * `RunStoreV1.submit` with the run claimed for `claim.workerId` when it may start at once.
   *
   * @throws what `submit` throws; `invalid_argument` for a claim without a worker id or with a
   *   lease of 0 ms or less.
   */
  submit(input: SubmitInput, claim: SubmitClaim, hooks?: SubmitHooks): Promise<SubmitResult>;
  /**
   * {@link NewSessionSubmitV1.submitIfNew} with the run claimed as {@link submit} claims it.
   * Present exactly when the store declares `capabilities.newSessionSubmit` too.
   *
   * @throws what {@link submit} throws.
   */
  submitIfNew?(
    input: SubmitInput,
    sessionIds: readonly string[],
    claim: SubmitClaim,
    hooks?: SubmitHooks,
  ): Promise<SubmitResult | undefined>;
}
