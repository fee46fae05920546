import type { Session } from "@openrath/core";
import { restoreSession } from "./checkpoint/delta-codec.js";
import type { Audited } from "./contract/access.js";
import type { Deployment, PlanRevision } from "./contract/deployments.js";
import { DurableError } from "./contract/durable-error.js";
import type { JournalStoreV1 } from "./contract/journal-store.js";
import type { ListRunsQuery, RunEvent, RunRecord, TraceContext } from "./contract/run-records.js";
import type { RunStoreV1 } from "./contract/run-store.js";
import type { SignalsV1 } from "./contract/signals.js";
import { isTerminal } from "./contract/status.js";
import type { StepMiddleware } from "./contract/step-context.js";
import { type CompiledPlan, compilePlan } from "./definition/compile.js";
import { type DurableDefinitionSource, definitionOf } from "./definition/durable-workflow.js";
import { EffectOperations } from "./effects/effect-operations.js";
import { type CloseOnSignalsOptions, closeOnSignals } from "./internal/close-on-signals.js";
import { IMPORT_WORKFLOW } from "./internal/import-workflow.js";
import { checkSubmitOptions, type SubmitOptions, submitRun } from "./internal/submit-run.js";
import { checkTraceContext } from "./internal/trace-context.js";
import { checkIdentifier, MAX_OBJECT_ID, MAX_TENANT_ID } from "./internal/validate.js";
import { type WaitOptions, waitRun } from "./internal/wait-run.js";
import { WorkflowNames } from "./internal/workflow-names.js";
import { InterruptOperations, type OperatorScope } from "./interrupts/interrupt-operations.js";
import { journalMiddleware } from "./journal/journal-middleware.js";
import { publishingJournal } from "./journal/publishing-journal.js";
import { ScheduleOperations } from "./schedules/schedule-operations.js";
import { type FollowedEvent, type FollowRunOptions, followRun } from "./signals/follow-run.js";
import { publishCommits } from "./signals/publishing-store.js";
import { FreshVisits } from "./worker/fresh-visits.js";
import { LocalDispatch } from "./worker/local-dispatch.js";
import { DurableWorker, type StopOptions, type WorkerOptions } from "./worker/worker.js";

export type { SubmitOptions } from "./internal/submit-run.js";
export type { ParkedRunDetails, WaitOptions } from "./internal/wait-run.js";

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
  /**
   * Step middleware of every worker this runtime makes (`runtime.worker()`), outside the journal
   * and before the worker's own `middleware`: tracing and metrics (`@openrath/otel`).
   */
  readonly middleware?: readonly StepMiddleware[];
  /**
   * Called on every submission before it is written, with the trace context the caller gave (if
   * any); the context it returns is stored with the run instead (`undefined`: none). A tracer
   * records the submission as a span here and returns that span's context, so the run's steps are
   * its children (`@openrath/otel`; ADR 0032). Must not throw.
   */
  readonly traceSubmit?: (submission: TraceSubmission) => TraceContext | undefined;
}

/** What {@link DurableRuntimeOptions.traceSubmit} is told of a submission. */
export interface TraceSubmission {
  /** The workflow name, or the plan hash when submitted by hash. */
  readonly workflow: string;
  readonly tenantId: string;
  /** The caller's trace context (`SubmitOptions.traceContext`), checked. */
  readonly traceContext: TraceContext | undefined;
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
  private readonly middleware: readonly StepMiddleware[] | undefined;
  private readonly traceSubmit: DurableRuntimeOptions["traceSubmit"];
  /** The plans registered here and the workflow names resolved through the store. */
  private readonly names: WorkflowNames;
  /** What this runtime and its workers share: submitted sessions, reserved slots, ended runs. */
  private readonly dispatch = new LocalDispatch();
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
    this.middleware = options.middleware;
    this.traceSubmit = options.traceSubmit;
    this.names = new WorkflowNames(this.store);
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
    this.schedules = new ScheduleOperations(
      this.store,
      () => featureOf(this.store, "schedules"),
      this.tenantId,
    );
  }

  /** Cron schedules that start workflows by name, on a store with `capabilities.schedules`. */
  readonly schedules: ScheduleOperations;

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
    this.names.add(plan);
    const deployments = this.names.deployments;
    if (deployments && options.deploy !== false) {
      const { deployment } = await deployments.deploy(plan.hash, { ifNewer: options.deploy !== true });
      this.names.deployed(plan.name, deployment.hash);
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
    const deployments = this.names.requireDeployments();
    const revision = (await deployments.revisions(name)).find((r) => r.version === version);
    if (!revision) {
      throw new DurableError("unknown_plan", `Workflow "${name}" has no registered version "${version}".`, {
        details: { workflow: name, version },
      });
    }
    const { deployment } = await deployments.deploy(revision.hash);
    this.names.deployed(name, deployment.hash);
    return deployment;
  }

  /**
   * The registered revisions of a workflow name, newest first, with the deployed one marked.
   *
   * @throws {DurableError} `not_supported` on a store without `capabilities.deployments`.
   */
  revisions(name: string): Promise<PlanRevision[]> {
    return this.names.requireDeployments().revisions(name);
  }

  /** The plans registered in this runtime, newest registration of each name last. */
  get plans(): CompiledPlan[] {
    return this.names.plans;
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
    let checked = checkSubmitOptions(options, (scope) => this.tenantOf(scope), this.clockSkewMs);
    const planHash = await this.names.hashOf(workflow);
    const entry = this.names.plan(planHash)?.entry ?? (await this.names.storedEntry(planHash));
    if (this.traceSubmit) {
      const name =
        typeof workflow === "string" ? (this.names.plan(planHash)?.name ?? workflow) : workflow.name;
      let traced: TraceContext | undefined;
      try {
        traced = this.traceSubmit({
          workflow: name,
          tenantId: checked.tenantId,
          traceContext: checked.traceContext,
        });
      } catch {
        traced = checked.traceContext;
      }
      checked = { ...checked, traceContext: traced === undefined ? undefined : checkTraceContext(traced) };
    }
    return submitRun(this.store, this.dispatch, { planHash, entry, session, options, checked });
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
   * Runs of the call's tenant, oldest first (newest first with `order: "desc"`), filtered by
   * status, session or plan; keyset-paged: pass the last run's id as `after` for the next page
   * (`limit` 1..1000, default 100).
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
    if (filters.order !== undefined && filters.order !== "asc" && filters.order !== "desc")
      throw new DurableError(
        "invalid_argument",
        `order must be "asc" or "desc", not ${JSON.stringify(filters.order)}.`,
        {
          details: { order: filters.order },
        },
      );
    return this.store.listRuns({ ...filters, tenantId: this.tenantOf(query) });
  }

  /**
   * Cancels a run of the call's tenant; the worker holding it aborts the step's signal. An
   * `audit` record is written in the cancel's transaction on a store with `capabilities.access`.
   *
   * @throws {DurableError} `run_not_found` (another tenant's run included), `invalid_transition`
   *   when the run has already ended.
   */
  async cancel(runId: string, reason?: string, scope?: OperatorScope & Audited): Promise<RunRecord> {
    await this.runOf(runId, scope);
    return this.store.cancel(runId, {
      ...(reason === undefined ? {} : { reason }),
      ...(scope?.audit === undefined ? {} : { audit: scope.audit }),
    });
  }

  /**
   * Brings a session recorded elsewhere (a session log of the framework layer) in as a historical
   * run of the workflow `openrath.import`: ended at once — `succeeded` for a log its writer
   * closed, `failed` with the code `imported_partial` for one it did not — never executed, and
   * shown by the API like any other run. Idempotent per tenant and session: importing the same
   * session again returns the run made the first time. No worker claims these runs (the import
   * plan is stored, not registered with the runtime's workers).
   *
   * @throws {DurableError} `session_busy` when the session has an active run here already.
   */
  async importSession(
    session: Session,
    options: OperatorScope &
      Audited & {
        /** Whether the recording was closed cleanly (default true). */
        readonly complete?: boolean;
        /** Where it came from (a file name), kept in the run's metadata. */
        readonly source?: string;
        readonly projectId?: string;
      } = {},
  ): Promise<{ readonly run: RunRecord; readonly created: boolean }> {
    const plan = compilePlan(definitionOf(IMPORT_WORKFLOW));
    await this.store.registerPlan(plan.record);
    const complete = options.complete !== false;
    const idempotencyKey = `openrath.import:${session.id}`;
    const tenantId = this.tenantOf(options);
    const existing = (
      await this.store.listRuns({ tenantId, sessionId: session.id, planHash: plan.hash, limit: 1 })
    )[0];
    if (existing && existing.idempotencyKey === idempotencyKey && isTerminal(existing.status))
      return { run: existing, created: false };
    const submitted = await this.submit(plan, session, {
      tenantId,
      idempotencyKey,
      ...(options.projectId !== undefined ? { projectId: options.projectId } : {}),
      ...(options.audit !== undefined ? { audit: options.audit } : {}),
      metadata: {
        imported: true,
        complete,
        ...(options.source !== undefined ? { source: options.source } : {}),
      },
    });
    // Ended by the importer itself: claimed by the plan no worker holds, then finished.
    for (let attempt = 0; attempt < 50; attempt++) {
      const run = await this.store.getRun(submitted.id, tenantId);
      if (!run || isTerminal(run.status)) return { run: run ?? submitted, created: false };
      const claims = await this.store.claim({
        workerId: "openrath-import",
        planHashes: [plan.hash],
        leaseMs: 30_000,
        limit: 16,
      });
      for (const claim of claims) {
        if (claim.run.id !== submitted.id) {
          // Another import's run: its importer finishes it.
          await this.store.release(claim.fence);
          continue;
        }
        const ended = await this.store.finish(
          claim.fence,
          complete
            ? { status: "succeeded" }
            : {
                status: "failed",
                error: {
                  code: "imported_partial",
                  message: "The recording was not closed by its writer: the session may end early.",
                  retryable: false,
                },
              },
        );
        return { run: ended, created: true };
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new DurableError(
      "store_unavailable",
      `The imported run ${submitted.id} could not be ended; import again.`,
      {
        details: { runId: submitted.id },
      },
    );
  }

  /**
   * Puts a run parked `needs_review` back in the queue, for an operator who has checked what the
   * run waited on. A run whose effects are still under review is refused: each needs a resolution
   * (`runtime.effects.resolve`), and the run resumes by itself when the last one is resolved. An
   * `audit` record is written in the transition's transaction on a store with `capabilities.access`.
   *
   * @throws {DurableError} `run_not_found` (another tenant's run included), `invalid_transition`
   *   when the run is not parked for review, `effects_under_review` (details: `effectIds`).
   */
  async resume(
    runId: string,
    options: OperatorScope & Audited & { readonly actor?: string; readonly reason?: string } = {},
  ): Promise<RunRecord> {
    const run = await this.runOf(runId, options);
    if (run.status !== "needs_review")
      throw new DurableError(
        "invalid_transition",
        `Run ${runId} is ${run.status}; only a run parked for review (needs_review) is resumed. An interrupt is answered by its decision.`,
        { details: { runId, status: run.status } },
      );
    const { items } = await this.effects.list({ tenantId: run.tenantId, runId, status: "needs_review" });
    if (items.length > 0)
      throw new DurableError(
        "effects_under_review",
        `Run ${runId} waits on ${items.length} effect(s) under review; resolve each (succeeded, failed or retry) and the run resumes by itself.`,
        { details: { runId, effectIds: items.map((effect) => effect.id) } },
      );
    return this.store.unpark(runId, {
      actor: options.actor ?? "operator",
      reason: options.reason ?? "resumed by an operator",
      ...(options.audit === undefined ? {} : { audit: options.audit }),
    });
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
    const { store, signals, dispatch, journalStore: journal } = this;
    return waitRun({ store, signals, dispatch, journal }, runId, tenantId, options);
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
    this.dispatch.checkpointedSession(session.id);
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
    const outer = this.middleware ?? [];
    const middleware = journaled
      ? [
          ...outer,
          journalMiddleware({
            name: this.store.name,
            capabilities: this.store.capabilities,
            journal: fresh.wrap(this.journalStore!),
          }),
          ...(options.middleware ?? []),
        ]
      : outer.length > 0
        ? [...outer, ...(options.middleware ?? [])]
        : options.middleware;
    if (this.closing)
      throw new DurableError("runtime_closed", "The durable runtime is closed: make workers before close().");
    const worker = new DurableWorker(
      this.store,
      this.signals,
      options.plans ?? this.plans,
      { ...options, ...(middleware ? { middleware } : {}) },
      { dispatch: this.dispatch, ...(journaled ? { fresh } : {}) },
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
  closeOnSignals(options: CloseOnSignalsOptions = {}): () => void {
    return closeOnSignals((stop) => this.close(stop), options);
  }
}

/** The store's feature member `key`, when its capability says it has one. */
function featureOf<K extends "schedules" | "webhooks">(
  store: RunStoreV1,
  key: K,
): NonNullable<RunStoreV1[K]> {
  const member = store.capabilities[key] ? store[key] : undefined;
  if (!member)
    throw new DurableError(
      "not_supported",
      `The ${store.name} store has no ${key} (capabilities.${key} is false).`,
    );
  return member as NonNullable<RunStoreV1[K]>;
}

/** Creates a {@link DurableRuntime} over a store. */
export function createDurableRuntime(options: DurableRuntimeOptions): DurableRuntime {
  return new DurableRuntime(options);
}
