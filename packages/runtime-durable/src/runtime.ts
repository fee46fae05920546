import type { JsonObject, Session } from "@openrath/core";
import { baseOf, encodeCheckpoint, restoreSession } from "./checkpoint/delta-codec.js";
import type { Deployment, DeploymentsV1, PlanRevision } from "./contract/deployments.js";
import { DurableError } from "./contract/durable-error.js";
import type { JournalStoreV1 } from "./contract/journal-store.js";
import type {
  CheckpointWrite,
  ListRunsQuery,
  RunEvent,
  RunRecord,
  SubmitInput,
  SubmitResult,
} from "./contract/run-records.js";
import type { RunStoreV1 } from "./contract/run-store.js";
import type { SignalsV1 } from "./contract/signals.js";
import { isTerminal, type RunStatus } from "./contract/status.js";
import { type CompiledPlan, compilePlan } from "./definition/compile.js";
import { type DurableDefinitionSource, definitionOf } from "./definition/durable-workflow.js";
import { EffectOperations } from "./effects/effect-operations.js";
import { canonicalJson, sha256 } from "./internal/canonical.js";
import { fastPathsOf } from "./internal/fast-paths.js";
import {
  checkIdentifier,
  checkJsonObject,
  checkTime,
  MAX_IDEMPOTENCY_KEY,
  MAX_METADATA_BYTES,
  MAX_OBJECT_ID,
  MAX_TENANT_ID,
} from "./internal/validate.js";
import { InterruptOperations, type OperatorScope } from "./interrupts/interrupt-operations.js";
import { journalMiddleware } from "./journal/journal-middleware.js";
import { publishingJournal } from "./journal/publishing-journal.js";
import { type FollowedEvent, type FollowRunOptions, followRun } from "./signals/follow-run.js";
import { publishCommits } from "./signals/publishing-store.js";
import { FreshVisits, RecentIds, RecentRuns, SubmittedSessions } from "./worker/handoff.js";
import { DurableWorker, type StopOptions, type WorkerOptions } from "./worker/worker.js";

/** Options of {@link createDurableRuntime}. */
export interface DurableRuntimeOptions {
  readonly store: RunStoreV1;
  /**
   * Signals to wake workers and follow runs (default: the store's own, `store.signals`). Other
   * signals (Redis) are published after every committed write, beside the store's own.
   */
  readonly signals?: SignalsV1;
  /**
   * The tenant this runtime acts for (default `"default"`): every call is scoped to it unless it
   * names another with `{ tenantId }`. Another tenant's run is not found, never shown or touched.
   */
  readonly tenantId?: string;
  /**
   * How far in the past a submission's `deadline` or `notBefore` may lie, for clock skew between
   * this process and the database (default 60 000 ms). Earlier is `invalid_argument`.
   */
  readonly clockSkewMs?: number;
}

/** Options of {@link DurableRuntime.submit}. Each is checked before anything is written (`invalid_argument`). */
export interface SubmitOptions {
  /** The run's tenant (default: the runtime's); at most 128 characters, no control characters. */
  readonly tenantId?: string;
  /**
   * Resubmitting with the same key returns the first run (same request) or fails (different one).
   * At most 256 characters, no control characters.
   */
  readonly idempotencyKey?: string;
  /** −100..100, higher first (default 0). */
  readonly priority?: number;
  /**
   * The run times out at this time (a valid `Date` or epoch milliseconds, not in the past by more
   * than `clockSkewMs`, after `notBefore`).
   */
  readonly deadline?: Date | number;
  /** Not started before this time (as `deadline`, not in the past by more than `clockSkewMs`). */
  readonly notBefore?: Date | number;
  /**
   * Caller data kept with the run and shown to steps as `ctx.metadata`: a plain JSON object of at
   * most 64 KiB as JSON ({@link MAX_METADATA_BYTES}).
   */
  readonly metadata?: JsonObject;
}

/** Options of {@link DurableRuntime.wait} and {@link DurableRuntime.result}. */
export interface WaitOptions extends OperatorScope {
  readonly signal?: AbortSignal;
  /**
   * What a park (`waiting` for an interrupt, `needs_review` for an effect) does to the wait:
   * `"throw"` (default) rejects with `run_parked`, naming the interrupts or effects the run waits
   * on; `"return"` resolves with the parked run (`wait` only); `"wait"` waits through parks until
   * the run ends.
   */
  readonly onPark?: "throw" | "return" | "wait";
}

/** What a parked run waits on, in the details of a `run_parked` error from `wait` or `result`. */
export interface ParkedRunDetails {
  readonly runId: string;
  readonly status: "waiting" | "needs_review";
  /** Pending interrupts: decide them with `runtime.interrupts.decide`. */
  readonly interrupts: readonly { readonly id: string; readonly kind: string; readonly stepId: string }[];
  /** Effects under review: resolve them with `runtime.effects.resolve`. */
  readonly effects: readonly { readonly id: string; readonly tool: string; readonly stepId: string }[];
}

const isParked = (status: RunStatus): status is "waiting" | "needs_review" =>
  status === "waiting" || status === "needs_review";

const HASH = /^[0-9a-f]{64}$/;
/** How long a name resolved through the store is reused: a deploy elsewhere is seen within this. */
const RESOLVED_MS = 1000;

/**
 * What a submitted session asks, for the idempotency fingerprint: its chunks without the ids,
 * times and session ids a new `Session` gets each time it is built, so a client that rebuilds the
 * same conversation and resubmits it under its key gets the first run back.
 */
function requestContent(session: Session): unknown[] {
  return session.toJSON().chunks.map(({ id: _id, createdAt: _at, sessionId: _session, ...rest }) => rest);
}

/**
 * The durable runtime: registers workflows as plans, submits runs, follows them, and makes
 * workers. Every piece of state is in the store; any number of runtimes (in any number of
 * processes, for a multi-process store) can share it.
 *
 * @example
 * ```ts
 * const runtime = createDurableRuntime({ store: await pgliteStore({ dataDir: ".openrath" }) });
 * await runtime.register(new Support());
 * const worker = runtime.worker({ concurrency: 8 });
 * await worker.start();
 * const run = await runtime.submit("support", Session.fromUserMessage("Where is my order?"));
 * const answer = await runtime.result(run.id); // waits, woken by the store's notifications
 * ```
 */
export class DurableRuntime {
  readonly store: RunStoreV1;
  readonly signals: SignalsV1;
  /** The tenant this runtime acts for (see {@link DurableRuntimeOptions.tenantId}). */
  readonly tenantId: string;
  private readonly clockSkewMs: number;
  private readonly byHash = new Map<string, CompiledPlan>();
  private readonly byName = new Map<string, CompiledPlan>();
  /** Workflow names resolved through the store's deployments, and when (`performance.now()`). */
  private readonly resolved = new Map<string, { readonly hash: string; readonly at: number }>();
  /** Sessions submitted here, for this runtime's workers (their first step needs no read). */
  private readonly submitted = new SubmittedSessions();
  /** Runs this runtime's workers ended, for its waiters (no read for what a worker here just wrote). */
  private readonly endedRuns = new RecentRuns<RunRecord>();
  /** Waiters of this runtime by run id, woken when a worker here ends the run (before its signal arrives). */
  private readonly endWaiters = new Map<string, Set<() => void>>();
  /** When this runtime submitted its recent runs (`performance.now()`, taken before the store call). */
  private readonly submittedAt = new RecentRuns<number>();
  /** Session ids this runtime submitted or read back: they have checkpoints, so no new-session attempt. */
  private readonly checkpointed = new RecentIds();
  /** Workers made by {@link worker}, stopped by {@link close}. */
  private readonly workers = new Set<DurableWorker>();
  private closing: Promise<void> | undefined;

  constructor(options: DurableRuntimeOptions) {
    this.signals = options.signals ?? options.store.signals;
    // Signals the store does not publish itself get every commit's signals from the runtime.
    this.store =
      this.signals === options.store.signals ? options.store : publishCommits(options.store, this.signals);
    this.tenantId = checkIdentifier("tenantId", options.tenantId ?? "default", MAX_TENANT_ID);
    this.clockSkewMs = Math.max(0, options.clockSkewMs ?? 60_000);
    const journal = this.store.journal;
    const published =
      journal && this.signals !== options.store.signals ? publishingJournal(journal, this.signals) : journal;
    this.journalStore = published;
    const required = () => {
      if (!published || !this.store.capabilities.journal) {
        throw new DurableError(
          "not_supported",
          `The ${this.store.name} store has no step journal, effect ledger or interrupts (capabilities.journal is false).`,
        );
      }
      return published;
    };
    this.effects = new EffectOperations(required, this.tenantId);
    this.interrupts = new InterruptOperations(required, this.tenantId);
  }

  /** The store's journal (published through the runtime's signals), when it has one. */
  private readonly journalStore: JournalStoreV1 | undefined;
  /** Operator access to the effect ledger: effects under review, and their resolution one by one. */
  readonly effects: EffectOperations;
  /** Operator access to interrupts: the inbox of pending ones, and decisions. */
  readonly interrupts: InterruptOperations;

  /**
   * Compiles a workflow (a `DurableWorkflow` or a `defineWorkflow()` definition), stores its plan
   * and deploys it: on a store with `capabilities.deployments`, the name then points at this
   * revision unless a revision registered later is deployed already (`deploy: true` moves it
   * anyway, `false` leaves the name alone). Revisions registered earlier stay executable by the
   * workers that hold them, so their runs finish during a deploy.
   *
   * @throws {DurableError} `invalid_definition` when it does not compile; `plan_conflict` when the
   *   store holds another plan under the same name and version (change the workflow's `version`).
   */
  async register(
    source: DurableDefinitionSource,
    options: { readonly deploy?: boolean } = {},
  ): Promise<CompiledPlan> {
    const plan = compilePlan(definitionOf(source));
    await this.store.registerPlan(plan.record);
    this.byHash.set(plan.hash, plan);
    this.byName.set(plan.name, plan);
    const deployments = this.deploymentsOf();
    if (deployments && options.deploy !== false) {
      const { deployment } = await deployments.deploy(plan.hash, { ifNewer: options.deploy !== true });
      this.resolved.set(plan.name, { hash: deployment.hash, at: performance.now() });
    }
    return plan;
  }

  /**
   * Points a workflow name at one of its registered revisions (a roll-forward or a rollback):
   * `submit(name)` starts it from then on, in every process (within a second in those that
   * resolved the name just before). Runs of other revisions go on.
   *
   * @example
   * ```ts
   * await runtime.deploy("support", "2");
   * ```
   * @throws {DurableError} `unknown_plan` for a version never registered; `not_supported` on a
   *   store without `capabilities.deployments`.
   */
  async deploy(name: string, version: string): Promise<Deployment> {
    const deployments = this.requireDeployments();
    const revision = (await deployments.revisions(name)).find((r) => r.version === version);
    if (!revision) {
      throw new DurableError("unknown_plan", `Workflow "${name}" has no registered version "${version}".`, {
        details: { workflow: name, version },
      });
    }
    const { deployment } = await deployments.deploy(revision.hash);
    this.resolved.set(name, { hash: deployment.hash, at: performance.now() });
    return deployment;
  }

  /**
   * The registered revisions of a workflow name, newest first, with the deployed one marked.
   *
   * @throws {DurableError} `not_supported` on a store without `capabilities.deployments`.
   */
  revisions(name: string): Promise<PlanRevision[]> {
    return this.requireDeployments().revisions(name);
  }

  private deploymentsOf(): DeploymentsV1 | undefined {
    return this.store.capabilities.deployments ? this.store.deployments : undefined;
  }

  private requireDeployments(): DeploymentsV1 {
    const deployments = this.deploymentsOf();
    if (!deployments)
      throw new DurableError(
        "not_supported",
        `The ${this.store.name} store does not resolve workflow names (capabilities.deployments is false).`,
      );
    return deployments;
  }

  /**
   * The plan hash a submission of `workflow` starts: a plan, a plan hash, or a name resolved
   * through the store's deployments (remembered for a second), else among this runtime's own.
   */
  private async planHashOf(workflow: string | CompiledPlan): Promise<string> {
    if (typeof workflow !== "string") return workflow.hash;
    if (HASH.test(workflow)) return workflow;
    const deployments = this.deploymentsOf();
    if (deployments) {
      checkIdentifier("workflow", workflow, 256);
      const known = this.resolved.get(workflow);
      if (known && performance.now() - known.at < RESOLVED_MS) return known.hash;
      const deployment = await deployments.current(workflow);
      if (deployment) {
        this.resolved.set(workflow, { hash: deployment.hash, at: performance.now() });
        return deployment.hash;
      }
    }
    const local = this.byName.get(workflow)?.hash;
    if (local !== undefined) return local;
    throw new DurableError(
      "unknown_plan",
      deployments
        ? `No workflow named ${JSON.stringify(workflow)} is deployed in the ${this.store.name} store.`
        : `No workflow named ${JSON.stringify(workflow)} is registered in this runtime; registered: ${[...this.byName.keys()].join(", ") || "none"}.`,
      { details: { workflow } },
    );
  }

  /** The plans registered in this runtime, newest registration of each name last. */
  get plans(): CompiledPlan[] {
    return [...this.byHash.values()];
  }

  /**
   * Submits a run of `workflow` on `session`: a workflow name (resolved through the store's
   * deployments, so a producer that only submits needs none of the workflow's code), a plan, or a
   * plan hash. The session becomes checkpoint 0, encoded against the newest checkpoint of the same session (or
   * its lineage parents) so a conversation's runs and forks share their stored chunks.
   *
   * @throws {DurableError} `unknown_plan`, `idempotency_conflict`, `session_busy`, `invalid_argument`.
   */
  async submit(
    workflow: string | CompiledPlan,
    session: Session,
    options: SubmitOptions = {},
  ): Promise<RunRecord> {
    const { tenantId, priority, deadline, notBefore } = this.checkSubmit(options);
    const planHash = await this.planHashOf(workflow);
    const entry = this.byHash.get(planHash)?.entry ?? (await this.entryOf(planHash));
    const sessionIds = [session.id, ...session.lineage.parents.map((p) => p.id)];
    const fields = { sequence: 0, stepId: null, nextStep: entry };
    // Only compared when the key is reused: without a key, no fingerprint (and no serialization of the session).
    const fingerprint =
      options.idempotencyKey === undefined
        ? ""
        : sha256(
            canonicalJson({
              planHash,
              tenantId,
              priority,
              deadline: deadline ?? null,
              metadata: options.metadata ?? {},
              session: sha256(JSON.stringify(requestContent(session))),
            }),
          );
    const input = (checkpoint: CheckpointWrite): SubmitInput => ({
      tenantId,
      planHash,
      checkpoint,
      priority,
      fingerprint,
      ...(options.idempotencyKey === undefined ? {} : { idempotencyKey: options.idempotencyKey }),
      ...(deadline === undefined ? {} : { deadline }),
      ...(notBefore === undefined ? {} : { notBefore }),
      ...(options.metadata === undefined ? {} : { metadata: options.metadata }),
    });
    const fast = fastPathsOf(this.store);
    // A worker of this runtime with a free slot for the plan: the submission claims the run for it
    // (in its own transaction, when the run may start at once), so the run starts without a claim.
    // Only on a store for several processes: on an embedded one (one connection, every statement
    // in turn) a claim is cheap and a busy worker does better to take the runs queued meanwhile in
    // one claim and to end them in shared statements (ADR 0018).
    const local =
      fast.claimOnSubmit &&
      this.store.capabilities.multiProcess &&
      (notBefore === undefined || notBefore <= Date.now())
        ? [...this.workers].find((worker) => worker.reserveSlot(planHash))
        : undefined;
    const claim = local ? { workerId: local.workerId, leaseMs: local.leaseMs } : undefined;
    let adopted = false;
    const settle = this.submitted.begin(tenantId, session.id);
    const startedAt = performance.now();
    try {
      // The plain path encodes the session against its head in the store and submits. A session this
      // runtime has not seen checkpointed is tried as a new one first (one round trip) where the
      // store has that fast path; it refuses if it has a head after all, and the plain path follows.
      let result: SubmitResult | undefined;
      let encoded = encodeCheckpoint(session, null, fields);
      // The run claimed for `local` starts as soon as its submission has committed, with the
      // session in memory (on a server, while the submission still waits for its WAL flush).
      const adopt = (run: RunRecord) => {
        if (adopted || !local || run.status !== "running" || run.leaseHolder !== local.workerId) return;
        adopted = true;
        this.submitted.hand({
          runId: run.id,
          session,
          base: encoded.next(run.checkpointId),
          checkpointId: run.checkpointId,
        });
        local.adopt({
          run,
          fence: { runId: run.id, token: run.fencingToken, workerId: local.workerId },
          leaseExpiresAt: run.leaseExpiresAt ?? 0,
        });
      };
      const hooks = local ? { onCommitted: adopt } : undefined;
      const submitNew = (checkpoint: CheckpointWrite) =>
        claim
          ? fast.claimOnSubmit?.submitIfNew?.(input(checkpoint), sessionIds, claim, hooks)
          : fast.newSessionSubmit?.submitIfNew(input(checkpoint), sessionIds, hooks);
      const submitEncoded = (checkpoint: CheckpointWrite) =>
        claim && fast.claimOnSubmit
          ? fast.claimOnSubmit.submit(input(checkpoint), claim, hooks)
          : this.store.submit(input(checkpoint), hooks);
      if (fast.newSessionSubmit && !this.checkpointed.has(session.id))
        result = await submitNew(encoded.write);
      if (result === undefined) {
        const head = await this.store.findSessionHead(tenantId, sessionIds);
        encoded = encodeCheckpoint(session, head ? baseOf(head) : null, fields);
        result = await submitEncoded(encoded.write);
      }
      this.checkpointed.add(session.id);
      const { run, created } = result;
      if (created) {
        this.submittedAt.set(run.id, startedAt);
        // A store that claimed without reporting the commit.
        adopt(run);
      }
      settle(
        created && !adopted
          ? { runId: run.id, session, base: encoded.next(run.checkpointId), checkpointId: run.checkpointId }
          : undefined,
      );
      return run;
    } catch (error) {
      settle();
      throw error;
    } finally {
      if (local && !adopted) local.releaseSlot();
    }
  }

  /** The submission's options, checked before anything reaches the store. */
  private checkSubmit(options: SubmitOptions) {
    if (typeof options !== "object" || options === null)
      throw new DurableError("invalid_argument", "submit options must be an object.");
    const tenantId = this.tenantOf(options);
    if (options.idempotencyKey !== undefined)
      checkIdentifier("idempotencyKey", options.idempotencyKey, MAX_IDEMPOTENCY_KEY);
    const priority = options.priority ?? 0;
    if (!Number.isInteger(priority) || priority < -100 || priority > 100) {
      throw new DurableError(
        "invalid_argument",
        `priority must be an integer from -100 to 100, got ${priority}.`,
        { details: { option: "priority" } },
      );
    }
    const now = Date.now();
    const time = (name: "deadline" | "notBefore") =>
      options[name] === undefined ? undefined : checkTime(name, options[name], now, this.clockSkewMs);
    const deadline = time("deadline");
    const notBefore = time("notBefore");
    if (deadline !== undefined && notBefore !== undefined && deadline <= notBefore) {
      throw new DurableError(
        "invalid_argument",
        `deadline (${new Date(deadline).toISOString()}) must be after notBefore (${new Date(notBefore).toISOString()}): the run could never start.`,
        { details: { option: "deadline" } },
      );
    }
    if (options.metadata !== undefined) checkJsonObject("metadata", options.metadata, MAX_METADATA_BYTES);
    return { tenantId, priority, deadline, notBefore };
  }

  /** The tenant a call acts in: the one it names (checked), else the runtime's. */
  private tenantOf(scope: OperatorScope | undefined): string {
    const tenantId = scope?.tenantId;
    return tenantId === undefined ? this.tenantId : checkIdentifier("tenantId", tenantId, MAX_TENANT_ID);
  }

  /**
   * The run in the call's tenant.
   *
   * @throws {DurableError} `run_not_found` when there is none (another tenant's run included).
   */
  private async runOf(runId: string, scope: OperatorScope | undefined): Promise<RunRecord> {
    const run = await this.get(runId, scope);
    if (!run) throw new DurableError("run_not_found", `No run ${runId}.`, { details: { runId } });
    return run;
  }

  private async entryOf(planHash: string): Promise<string> {
    const plan = await this.store.getPlan(planHash);
    if (!plan) {
      throw new DurableError("unknown_plan", `No plan ${planHash} is registered in the store.`, {
        details: { planHash },
      });
    }
    return String(plan.definition.entry);
  }

  /**
   * The run, or `undefined` (also for a run of another tenant than the call's).
   *
   * @throws {DurableError} `invalid_argument` for a run id that is not a short string without
   *   control characters.
   */
  async get(runId: string, scope?: OperatorScope): Promise<RunRecord | undefined> {
    checkIdentifier("runId", runId, MAX_OBJECT_ID);
    return this.store.getRun(runId, this.tenantOf(scope));
  }

  /**
   * Runs of the call's tenant, oldest first, filtered by status, session or plan; keyset-paged:
   * pass the last run's id as `after` for the next page (`limit` 1..1000, default 100).
   *
   * @example
   * ```ts
   * const page = await runtime.listRuns({ status: ["running", "queued"], limit: 50 });
   * const next = await runtime.listRuns({ status: ["running", "queued"], limit: 50, after: page.at(-1)?.id });
   * ```
   */
  async listRuns(query: Omit<ListRunsQuery, "tenantId"> & OperatorScope = {}): Promise<RunRecord[]> {
    const { tenantId: _tenant, ...filters } = query;
    if (filters.after !== undefined) checkIdentifier("after", filters.after, MAX_OBJECT_ID);
    return this.store.listRuns({ ...filters, tenantId: this.tenantOf(query) });
  }

  /**
   * Cancels a run of the call's tenant; the worker holding it aborts the step's signal.
   *
   * @throws {DurableError} `run_not_found` (another tenant's run included), `invalid_transition`
   *   when the run has already ended.
   */
  async cancel(runId: string, reason?: string, scope?: OperatorScope): Promise<RunRecord> {
    await this.runOf(runId, scope);
    return this.store.cancel(runId, reason === undefined ? {} : { reason });
  }

  /**
   * Waits until the run ends, woken by its event notifications rather than by polling. A park
   * settles the wait too, by default with a `run_parked` error whose details
   * ({@link ParkedRunDetails}) name the interrupts or effects the run waits on; `onPark: "return"`
   * resolves with the parked run instead, `onPark: "wait"` waits through parks.
   *
   * @throws {DurableError} `run_not_found` (another tenant's run included); `run_parked`; the
   *   signal's reason when `signal` fires.
   */
  async wait(runId: string, options: WaitOptions = {}): Promise<RunRecord> {
    const tenantId = this.tenantOf(options);
    checkIdentifier("runId", runId, MAX_OBJECT_ID);
    const onPark = options.onPark ?? "throw";
    if (onPark !== "throw" && onPark !== "return" && onPark !== "wait")
      throw new DurableError(
        "invalid_argument",
        `onPark must be "throw", "return" or "wait", got ${String(onPark)}.`,
      );
    const done = (status: RunStatus) => isTerminal(status) || (onPark !== "wait" && isParked(status));
    const settle = async (run: RunRecord): Promise<RunRecord> => {
      if (run.tenantId !== tenantId)
        throw new DurableError("run_not_found", `No run ${runId}.`, { details: { runId } });
      if (onPark === "throw" && isParked(run.status)) throw await this.parkedError(run);
      return run;
    };
    let wake: (() => void) | undefined;
    let pending = false;
    let final = false;
    const poke = () => {
      pending = true;
      const w = wake;
      wake = undefined;
      w?.();
    };
    const stop = await this.signals.subscribe(`run:${runId}`, (signal) => {
      // A live payload changes nothing stored, and a known non-final status needs no read.
      if (
        signal.kind === "event" &&
        (signal.live !== undefined || (signal.status !== undefined && !done(signal.status)))
      )
        return;
      final ||= signal.kind === "event" && signal.status !== undefined && isTerminal(signal.status);
      poke();
    });
    const onAbort = () => wake?.();
    options.signal?.addEventListener("abort", onAbort);
    // A worker of this runtime ending the run wakes the waiter at once, before the end's signal.
    const waiters = this.endWaiters.get(runId) ?? new Set();
    this.endWaiters.set(runId, waiters);
    waiters.add(poke);
    // A run a worker of this runtime ended: its final record, without a read.
    const endedHere = () => {
      const run = this.endedRuns.get(runId);
      return run && done(run.status) ? run : undefined;
    };
    // A run submitted here that the signals heard nothing end or park since: its next signal is
    // awaited without reading it first.
    const since = this.submittedAt.get(runId);
    const heard = this.signals.capabilities.heardRuns === true ? this.signals.heardRuns : undefined;
    let unread = since !== undefined && heard?.heard(runId, since) === null;
    try {
      for (;;) {
        options.signal?.throwIfAborted();
        if (unread && !pending && !endedHere()) {
          unread = false;
          await new Promise<void>((resolve) => {
            wake = resolve;
            setTimeout(resolve, 10_000).unref?.();
          });
          continue;
        }
        unread = false;
        pending = false;
        // An embedded store announces the end before its worker has the record back: let it land.
        if (final) await new Promise((resolve) => setImmediate(resolve));
        final = false;
        const known = endedHere();
        if (known) return await settle(known);
        const run = await this.store.getRun(runId, tenantId);
        if (!run) throw new DurableError("run_not_found", `No run ${runId}.`, { details: { runId } });
        if (done(run.status)) return await settle(run);
        if (pending) continue;
        // Woken by the run's next event; a slow safety re-read covers a notification lost in a reconnect.
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 10_000).unref?.();
        });
      }
    } finally {
      options.signal?.removeEventListener("abort", onAbort);
      waiters.delete(poke);
      if (waiters.size === 0 && this.endWaiters.get(runId) === waiters) this.endWaiters.delete(runId);
      await stop();
    }
  }

  /** The `run_parked` error of a parked run, naming what it waits on (from the journal, when the store has one). */
  private async parkedError(run: RunRecord): Promise<DurableError> {
    const status = run.status as ParkedRunDetails["status"];
    const journal = this.store.capabilities.journal ? this.journalStore : undefined;
    const [interrupts, effects] = journal
      ? await Promise.all([
          journal.listInterrupts({ tenantId: run.tenantId, runId: run.id, status: "pending", limit: 200 }),
          journal.listEffects({ tenantId: run.tenantId, runId: run.id, status: "needs_review", limit: 200 }),
        ])
      : [{ items: [] }, { items: [] }];
    const details: ParkedRunDetails = {
      runId: run.id,
      status,
      interrupts: interrupts.items.map((i) => ({ id: i.id, kind: i.kind, stepId: i.stepId })),
      effects: effects.items.map((e) => ({ id: e.id, tool: e.tool, stepId: e.stepId })),
    };
    const what = [
      ...details.interrupts.map((i) => `${i.kind} interrupt ${i.id} (step "${i.stepId}")`),
      ...details.effects.map((e) => `effect ${e.id} of tool "${e.tool}" under review (step "${e.stepId}")`),
    ];
    const how =
      status === "waiting"
        ? "decide it with runtime.interrupts.decide"
        : "resolve it with runtime.effects.resolve";
    return new DurableError(
      "run_parked",
      `Run ${run.id} is parked (${status})${what.length > 0 ? ` waiting on ${what.join(", ")}` : ""}: ${how}, then wait again (or pass { onPark: "wait" } to wait through parks).`,
      { details: { ...details } },
    );
  }

  /**
   * Waits for the run to succeed and returns its final Session.
   *
   * @throws {DurableError} with the run's error when it ends otherwise; `run_parked` when it
   *   parks (unless `onPark: "wait"`); `run_not_found`.
   */
  async result(
    runId: string,
    options: Omit<WaitOptions, "onPark"> & { onPark?: "throw" | "wait" } = {},
  ): Promise<Session> {
    const run = await this.wait(runId, options);
    if (run.status !== "succeeded") {
      throw new DurableError(
        (run.error?.code as never) ?? "step_failed",
        `Run ${runId} ended ${run.status}: ${run.error?.message ?? "no error recorded"}.`,
        {
          details: { runId, status: run.status, error: run.error },
        },
      );
    }
    return this.loadSession(run.id);
  }

  /**
   * The Session of the run's latest (or `sequence`) checkpoint.
   *
   * @throws {DurableError} `run_not_found` (another tenant's run included).
   */
  async session(runId: string, sequence?: number, scope?: OperatorScope): Promise<Session> {
    await this.runOf(runId, scope);
    return this.loadSession(runId, sequence);
  }

  private async loadSession(runId: string, sequence?: number): Promise<Session> {
    const checkpoint = await this.store.loadCheckpoint(runId, sequence);
    if (!checkpoint)
      throw new DurableError("run_not_found", `No checkpoint ${sequence ?? "(latest)"} for run ${runId}.`);
    const session = restoreSession(checkpoint);
    this.checkpointed.add(session.id);
    return session;
  }

  /**
   * The run's stored events after `after`, as they are committed (woken by the run's signal), with
   * no gap and no duplicate: {@link stream} without the live events. Ends when the run is terminal
   * (or parked, with `parked: true`) and every event has been read.
   */
  follow(
    runId: string,
    options: { after?: number; signal?: AbortSignal; parked?: boolean } & OperatorScope = {},
  ): AsyncGenerator<RunEvent> {
    return this.stream(runId, { ...options, live: false }) as AsyncGenerator<RunEvent>;
  }

  /**
   * The run's events for a live view (server-sent events, a terminal UI): the stored events after
   * `after` first, then the ones committed since and the live ones steps publish with
   * `ctx.emitLive` (token deltas), with no gap and no duplicate among the stored ones. Ends after
   * the event that ends the run (or parks it, with `parked: true`).
   *
   * @throws {DurableError} `run_not_found` (another tenant's run included); the signal's reason
   *   when `signal` fires.
   */
  async *stream(
    runId: string,
    options: FollowRunOptions & OperatorScope = {},
  ): AsyncGenerator<FollowedEvent> {
    const { tenantId: _tenant, ...follow } = options;
    // The run's tenant never changes: checked once, before anything of it is read.
    await this.runOf(runId, options);
    yield* followRun(this.store, this.signals, runId, follow);
  }

  /** A worker for the plans registered here (or `options.plans`). Call `start()` on it. */
  worker(
    options: WorkerOptions & { plans?: readonly CompiledPlan[]; journal?: boolean } = {},
  ): DurableWorker {
    // A store with a journal gets it on every step (agents resume mid-loop, ctx.interrupt works) unless declined.
    const journaled = options.journal !== false && this.journalStore && this.store.capabilities.journal;
    const fresh = new FreshVisits();
    const middleware = journaled
      ? [
          journalMiddleware({
            name: this.store.name,
            capabilities: this.store.capabilities,
            journal: fresh.wrap(this.journalStore!),
          }),
          ...(options.middleware ?? []),
        ]
      : options.middleware;
    if (this.closing)
      throw new DurableError("runtime_closed", "The durable runtime is closed: make workers before close().");
    const worker = new DurableWorker(
      this.store,
      this.signals,
      options.plans ?? this.plans,
      { ...options, ...(middleware ? { middleware } : {}) },
      {
        handoff: this.submitted,
        ended: (run) => {
          this.endedRuns.set(run.id, run);
          for (const wake of this.endWaiters.get(run.id) ?? []) wake();
        },
        ...(journaled ? { fresh } : {}),
      },
    );
    this.workers.add(worker);
    return worker;
  }

  /**
   * Shuts the runtime down so the process can exit: every worker made by {@link worker} stops
   * claiming, lets its steps in flight finish and commit within the drain deadline (`drainMs`,
   * default the worker's, 10 s), aborts the ones past it, and hands its runs back to the queue
   * so another worker continues them at once ({@link DurableWorker.stop}); then the signals given
   * to the runtime (when they are not the store's own) and the store are closed. Idempotent; no
   * worker can be made afterwards.
   */
  close(options: StopOptions = {}): Promise<void> {
    this.closing ??= (async () => {
      await Promise.allSettled([...this.workers].map((worker) => worker.stop(options)));
      this.workers.clear();
      if (this.signals !== this.store.signals) await this.signals.close().catch(() => {});
      await this.store.close();
    })();
    return this.closing;
  }

  /**
   * Closes the runtime when the process is asked to stop (SIGTERM from an orchestrator, SIGINT
   * from a terminal), then exits: the workers hand their runs over within the drain deadline
   * ({@link close}). A second signal exits at once. Returns a function that removes the handlers.
   *
   * @example
   * ```ts
   * const runtime = createDurableRuntime({ store });
   * await runtime.worker({ drainMs: 20_000 }).start();
   * runtime.closeOnSignals(); // Kubernetes: terminationGracePeriodSeconds above the drain deadline
   * ```
   */
  closeOnSignals(
    options: StopOptions & {
      readonly signals?: readonly NodeJS.Signals[];
      /** Exit the process once closed (default true), with code 0, or 1 when closing failed. */
      readonly exit?: boolean;
    } = {},
  ): () => void {
    const signals = options.signals ?? ["SIGTERM", "SIGINT"];
    let received = false;
    const onSignal = (name: NodeJS.Signals) => {
      if (received) process.exit(130);
      received = true;
      this.close(options).then(
        () => {
          if (options.exit !== false) process.exit(0);
        },
        (error: unknown) => {
          process.stderr.write(
            `openrath: closing on ${name} failed: ${(error as Error)?.message ?? error}\n`,
          );
          if (options.exit !== false) process.exit(1);
        },
      );
    };
    for (const name of signals) process.on(name, onSignal);
    return () => {
      for (const name of signals) process.off(name, onSignal);
    };
  }
}

/** Creates a {@link DurableRuntime} over a store. */
export function createDurableRuntime(options: DurableRuntimeOptions): DurableRuntime {
  return new DurableRuntime(options);
}
