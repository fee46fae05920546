import type { AccessStoreV1, AuditInput } from "./access.js";
import type { DeploymentsV1 } from "./deployments.js";
import type { ClaimOnSubmitV1, GroupCommitV1, NewSessionSubmitV1 } from "./fast-paths.js";
import type { JournalStoreV1 } from "./journal-store.js";
import type { MessageQueueV1 } from "./message-queue.js";
import type {
  CheckpointWrite,
  Claim,
  ClaimList,
  ClaimRequest,
  EventInput,
  Fence,
  FinishInput,
  HeartbeatResult,
  ListRunsQuery,
  MaterializedCheckpoint,
  PlanRecord,
  RetentionPolicy,
  RetentionResult,
  RunErrorInfo,
  RunEvent,
  RunRecord,
  SubmitInput,
  SubmitResult,
  SweepResult,
} from "./run-records.js";
import type { SchedulesV1 } from "./schedules.js";
import type { SignalsV1 } from "./signals.js";
import type { StoreStatsV1 } from "./stats.js";
import type { WebhooksV1 } from "./webhooks.js";

/**
 * What a store can do, declared up front: the runtime fails fast on a missing capability and the
 * conformance suite verifies every claim. A capability that names a member of the store
 * (`journal`, `deployments` and the fast paths `groupCommit`, `newSessionSubmit`,
 * `claimOnSubmit`) is true exactly when that member is present. The later ones are optional:
 * absent means false, so a store written for the first release stays valid.
 */
export interface RunStoreCapabilities {
  /** Several processes (on several machines) may share the store. PGlite: false. */
  readonly multiProcess: boolean;
  /**
   * The store's writes publish their signals (work, cancel, run events) on commit through
   * {@link RunStoreV1.signals}, so subscribers are woken without polling.
   */
  readonly notifiesOnCommit: boolean;
  /** Lease expiry, deadlines and `notBefore` are judged by the database's clock. */
  readonly databaseClock: boolean;
  /** `applyRetention` and `eraseSession` are implemented. */
  readonly retention: boolean;
  /** `setTenantLimit` caps concurrently running runs per tenant. */
  readonly tenantLimits: boolean;
  /**
   * `journal` holds the step journal, the effect ledger and interrupts ({@link JournalStoreV1}):
   * agents in steps resume mid-loop, effects are reviewed one by one, steps ask humans. Absent
   * (a store written for the first release) means false.
   */
  readonly journal?: boolean;
  /** `groupCommit` commits several steps of a run in one transaction ({@link GroupCommitV1}). */
  readonly groupCommit?: boolean;
  /** `newSessionSubmit` submits a session the store has not seen in one round trip ({@link NewSessionSubmitV1}). */
  readonly newSessionSubmit?: boolean;
  /** `claimOnSubmit` creates a submitted run already claimed for a worker ({@link ClaimOnSubmitV1}). */
  readonly claimOnSubmit?: boolean;
  /**
   * `deployments` resolves workflow names through the store ({@link DeploymentsV1}), and
   * `registerPlan` refuses a second plan under a name and version already registered. Absent means
   * false: a runtime then resolves names among the workflows it registered itself.
   */
  readonly deployments?: boolean;
  /**
   * `access` keeps API tokens and the audit log ({@link AccessStoreV1}), and the mutations that
   * take an `audit` input write it in their transaction. Absent means false: such a store ignores
   * `audit` inputs, and a server in front of it has no stored tokens.
   */
  readonly access?: boolean;
  /**
   * `schedules` keeps cron schedules that start workflows by name, each firing once across
   * workers ({@link SchedulesV1}). Absent means false.
   */
  readonly schedules?: boolean;
  /**
   * `webhooks` keeps webhook endpoints and an outbox of deliveries written with the run changes
   * they report ({@link WebhooksV1}). Absent means false.
   */
  readonly webhooks?: boolean;
  /**
   * `messageQueue` keeps messages queued behind a session's active run until it ends
   * ({@link MessageQueueV1}). Absent means false.
   */
  readonly messageQueue?: boolean;
  /**
   * `stats` reads store-wide counts for monitoring: runs by status and workflow, the due queue,
   * effects under review, open interrupts ({@link StoreStatsV1}). Absent means false.
   */
  readonly stats?: boolean;
}

/**
 * Optional callbacks of one submission (`RunStoreV1.submit` and the submissions of its fast paths).
 * A store that does not know them ignores them; a caller gets the same result either way.
 */
export interface SubmitHooks {
  /**
   * Called at most once, with the new run, as soon as the submission has committed (other
   * connections see the queued run, so a worker may claim it) and before the store waits for the
   * commit to be durable: on a server with relaxed commits, while the WAL flush the call waits for
   * is still running. Not called when the call creates no run (an earlier submission with the same
   * idempotency key answers, or `submitIfNew` writes nothing), nor when the write fails before it
   * commits. The call still resolves only once the run is durable, and may still reject after
   * this (the flush failed: the run may or may not survive a database crash).
   *
   * The runtime publishes the run's `work` signal from here when its signals are not the store's
   * own (Redis), so a worker starts the run while the submitter waits for the flush, as one
   * woken by the store's in-transaction notification does (ADR 0018 decision 6). Must return quickly and not
   * throw; a store ignores what it throws. A store that never calls it is a valid v1 store: the
   * runtime then publishes once the call has resolved.
   */
  readonly onCommitted?: (run: RunRecord) => void;
}

/**
 * The storage contract of the durable runtime, version 1: everything the runtime needs from a
 * database. Every state change happens in one transaction with the version bump and the event
 * that reports it; every worker write carries a {@link Fence} and is rejected when the fence is
 * stale. Implemented by `@openrath/store-postgres` (PostgreSQL and PGlite) and proven by
 * `@openrath/testing/store`.
 *
 * Errors are `DurableError`s with stable codes (`run_not_found`, `stale_fence`,
 * `version_conflict`, `invalid_transition`, `idempotency_conflict`, `session_busy`,
 * `unknown_plan`, `plan_conflict`, `corrupt_checkpoint`, `store_unavailable`).
 *
 * The plain members below are all a store needs. Members added later sit behind capabilities:
 * features (`journal`, `deployments`) and fast paths, where a store does what plain members do in
 * fewer round trips (`groupCommit`, `newSessionSubmit`, `claimOnSubmit`); a v1 store without them
 * stays a valid v1 store.
 */
export interface RunStoreV1 {
  readonly specVersion: "v1";
  /** A short name for messages and metrics, such as `"postgres"` or `"pglite"`. */
  readonly name: string;
  readonly capabilities: RunStoreCapabilities;
  /** The signals the store publishes on commit (work, cancel, run events). */
  readonly signals: SignalsV1;

  /** The database's clock, in epoch milliseconds. */
  now(): Promise<number>;

  /**
   * Stores a plan. Insert-once: registering the same hash with the same content again is a no-op.
   *
   * @throws code `plan_conflict` when the hash is taken by different content, or (with
   *   `capabilities.deployments`) when another plan is registered under the same name and version.
   */
  registerPlan(plan: PlanRecord): Promise<void>;
  /** The plan stored under `hash`, or `undefined`. */
  getPlan(hash: string): Promise<PlanRecord | undefined>;

  /**
   * Creates a queued run with its submitted session as checkpoint 0 and a `run.created` event, or
   * returns the run an earlier submission with the same (tenant, idempotency key) created.
   *
   * With `hooks.onCommitted`, the store reports the new run as soon as it has committed, before
   * it waits for the commit to be durable ({@link SubmitHooks}); the call itself still resolves
   * only once the run is durable.
   *
   * @returns the run and whether this call created it.
   * @throws `unknown_plan` for an unregistered plan, `idempotency_conflict` when the key was used
   *   with another fingerprint, `session_busy` when the session already has an active run.
   */
  submit(input: SubmitInput, hooks?: SubmitHooks): Promise<SubmitResult>;

  /** The run, or `undefined`. With `tenantId`, a run of another tenant is `undefined` too. */
  getRun(runId: string, tenantId?: string): Promise<RunRecord | undefined>;
  /** Runs of a tenant, oldest first (newest with `order: "desc"`), keyset-paginated by `after`. */
  listRuns(query: ListRunsQuery): Promise<RunRecord[]>;

  /**
   * Claims up to `limit` queued runs of the given plans whose `notBefore` has passed, highest
   * priority first, then oldest; skips rows other claimers hold (`FOR UPDATE SKIP LOCKED`) and
   * tenants at their running cap. Each claim bumps the fencing token and writes `run.claimed`.
   */
  claim(request: ClaimRequest): Promise<ClaimList>;
  /**
   * Takes back the runs still leased to `workerId` (a restarted worker with the same identity),
   * at once and without waiting for the old leases to expire: each gets a new fencing token, so
   * anything the previous incarnation still writes is rejected.
   */
  reclaim(request: Omit<ClaimRequest, "limit">): Promise<Claim[]>;
  /** Renews the leases in `fences` (database clock) and reports the ones that are gone. */
  heartbeat(fences: readonly Fence[], leaseMs: number): Promise<HeartbeatResult>;

  /**
   * The checkpoint `sequence` of the run (default: its latest), resolved into chunks and lineage.
   *
   * @throws `corrupt_checkpoint` when the stored row cannot be resolved.
   */
  loadCheckpoint(runId: string, sequence?: number): Promise<MaterializedCheckpoint | undefined>;
  /**
   * The newest checkpoint of any of these sessions in the tenant, resolved: the base a new run's
   * checkpoint 0 is encoded against, so runs and forks of one session share their chunks.
   */
  findSessionHead(
    tenantId: string,
    sessionIds: readonly string[],
  ): Promise<MaterializedCheckpoint | undefined>;

  /**
   * Commits a step: the checkpoint, the run's new `nextStep` (attempt back to 1), version + 1 and a
   * `run.checkpoint` event, in one transaction.
   *
   * @throws `stale_fence` when the lease is no longer the fence's, `version_conflict` when
   *   `expectedVersion` is given and differs.
   */
  commitStep(fence: Fence, checkpoint: CheckpointWrite, expectedVersion?: number): Promise<RunRecord>;
  /** Ends a running run (fenced), optionally with its final checkpoint, and releases the lease. */
  finish(fence: Fence, input: FinishInput): Promise<RunRecord>;
  /**
   * Records a failed attempt and puts the run back in the queue, not to be claimed before
   * `delayMs` has passed (database clock); `attempt` becomes `attempt + 1`. Fenced.
   */
  scheduleRetry(
    fence: Fence,
    input: { readonly delayMs: number; readonly error: RunErrorInfo },
  ): Promise<RunRecord>;
  /** Gives a running run back to the queue without counting an attempt (graceful shutdown). Fenced. */
  release(fence: Fence): Promise<RunRecord>;
  /**
   * Parks a running run in `waiting` or `needs_review` and releases its lease (the seam interrupts
   * and the effect ledger use). Fenced.
   */
  park(
    fence: Fence,
    input: {
      readonly status: "waiting" | "needs_review";
      readonly reason: string;
      readonly data?: EventInput["data"];
    },
  ): Promise<RunRecord>;
  /** Puts a parked run back in the queue (a decision arrived, a review was resolved). */
  unpark(
    runId: string,
    input: { readonly actor: string; readonly reason: string; readonly audit?: AuditInput },
  ): Promise<RunRecord>;
  /**
   * Cancels an active run (queued, running or parked) and signals the worker that holds it.
   *
   * @throws `invalid_transition` when the run is already terminal.
   */
  cancel(
    runId: string,
    input?: { readonly reason?: string; readonly actor?: string; readonly audit?: AuditInput },
  ): Promise<RunRecord>;

  /** Appends an event to a run the worker holds (fenced); returns its sequence. */
  appendEvent(fence: Fence, event: EventInput): Promise<number>;
  /** Events of a run with `seq > after` (default 0), in order, at most `limit` (default 1000). */
  readEvents(
    runId: string,
    options?: { readonly after?: number; readonly limit?: number },
  ): Promise<RunEvent[]>;

  /**
   * Puts running runs whose lease expired (database clock) back in the queue, and ends queued and
   * parked runs past their deadline as `timed_out`. Safe to call from every worker at once.
   */
  sweep(): Promise<SweepResult>;
  /** Caps the tenant's concurrently running runs (`null` removes the cap). */
  setTenantLimit(tenantId: string, maxRunning: number | null): Promise<void>;
  /**
   * Applies retention policies to terminal runs: old runs go, then old checkpoints beyond the
   * kept ones; never what an active run (or an open interrupt) needs. Chunks nothing refers to
   * any more are deleted.
   */
  applyRetention(policies: readonly RetentionPolicy[]): Promise<RetentionResult>;
  /**
   * Erases a session: its runs (which must all be terminal), their checkpoints and events, and its
   * chunks that no other session's checkpoint refers to.
   *
   * @throws `session_busy` when the session has an active run.
   */
  eraseSession(tenantId: string, sessionId: string): Promise<RetentionResult>;

  /**
   * The digests of `tenantId`'s artifacts that stored chunks refer to (the claim-check stubs that
   * `withArtifactOffload` writes), for `collectArtifactGarbage`. Optional: the artifacts of a store
   * without it cannot be collected by reference.
   */
  referencedArtifacts?(tenantId: string): Promise<ReadonlySet<string>>;

  /** Fast path: several step commits in one transaction, when `capabilities.groupCommit` is true. */
  readonly groupCommit?: GroupCommitV1;
  /** Fast path: a new session's submission in one round trip, when `capabilities.newSessionSubmit` is true. */
  readonly newSessionSubmit?: NewSessionSubmitV1;
  /** Fast path: a submission that claims its run, when `capabilities.claimOnSubmit` is true. */
  readonly claimOnSubmit?: ClaimOnSubmitV1;

  /** API tokens and the audit log, when `capabilities.access` is true. */
  readonly access?: AccessStoreV1;

  /** Cron schedules, when `capabilities.schedules` is true. */
  readonly schedules?: SchedulesV1;

  /** Webhook endpoints and their outbox, when `capabilities.webhooks` is true. */
  readonly webhooks?: WebhooksV1;

  /** Messages queued behind a session's active run, when `capabilities.messageQueue` is true. */
  readonly messageQueue?: MessageQueueV1;

  /** Store-wide counts for monitoring, when `capabilities.stats` is true. */
  readonly stats?: StoreStatsV1;

  /** Workflow names resolved through the store, when `capabilities.deployments` is true. */
  readonly deployments?: DeploymentsV1;

  /**
   * The step journal, effect ledger and interrupts, when `capabilities.journal` is true: members
   * added behind a capability, so a store without them stays a valid v1 store.
   */
  readonly journal?: JournalStoreV1;

  /** Closes connections (and the embedded database). Idempotent. */
  close(): Promise<void>;
}
