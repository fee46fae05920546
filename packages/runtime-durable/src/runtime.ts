import type { JsonObject, Session } from "@openrath/core";
import { baseOf, encodeCheckpoint, restoreSession } from "./checkpoint-codec.js";
import type { CheckpointWrite, RunEvent, RunRecord, SubmitInput } from "./contract/records.js";
import type { RunStoreV1 } from "./contract/run-store.js";
import type { SignalsV1 } from "./contract/signals.js";
import { isTerminal, type RunStatus } from "./contract/status.js";
import { type CompiledPlan, compilePlan } from "./definition/compile.js";
import { type DurableDefinitionSource, definitionOf } from "./definition/durable-workflow.js";
import { EffectOperations } from "./effects/effect-operations.js";
import { DurableError } from "./errors.js";
import { canonicalJson, sha256 } from "./internal/canonical.js";
import { InterruptOperations } from "./interrupts/interrupt-operations.js";
import { journalMiddleware } from "./journal/journal-middleware.js";
import type { JournalStoreV1 } from "./journal/journal-store.js";
import { publishingJournal } from "./journal/publishing-journal.js";
import { type FollowedEvent, type FollowRunOptions, followRun } from "./signals/follow-run.js";
import { publishCommits } from "./signals/publishing-store.js";
import { FreshVisits, RecentIds, RecentRuns, SubmittedSessions } from "./worker/handoff.js";
import { DurableWorker, type WorkerOptions } from "./worker/worker.js";

/** Options of {@link createDurableRuntime}. */
export interface DurableRuntimeOptions {
  readonly store: RunStoreV1;
  /**
   * Signals to wake workers and follow runs (default: the store's own, `store.signals`). Other
   * signals (Redis) are published after every committed write, beside the store's own.
   */
  readonly signals?: SignalsV1;
  /** The tenant of submissions that name none (default `"default"`). */
  readonly tenantId?: string;
}

/** Options of {@link DurableRuntime.submit}. */
export interface SubmitOptions {
  readonly tenantId?: string;
  /** Resubmitting with the same key returns the first run (same request) or fails (different one). */
  readonly idempotencyKey?: string;
  /** −100..100, higher first (default 0). */
  readonly priority?: number;
  /** The run times out at this time (a `Date` or epoch milliseconds). */
  readonly deadline?: Date | number;
  /** Not started before this time. */
  readonly notBefore?: Date | number;
  /** Caller data kept with the run and shown to steps as `ctx.metadata`. */
  readonly metadata?: JsonObject;
}

const HASH = /^[0-9a-f]{64}$/;

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
  private readonly tenantId: string;
  private readonly byHash = new Map<string, CompiledPlan>();
  private readonly byName = new Map<string, CompiledPlan>();
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
    this.tenantId = options.tenantId ?? "default";
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
   * Compiles a workflow (a `DurableWorkflow` or a `defineWorkflow()` definition) and stores its
   * plan. The latest registration of a name is what `submit(name)` uses; earlier revisions stay
   * executable by workers that hold them.
   *
   * @throws {DurableError} `invalid_definition` when it does not compile.
   */
  async register(source: DurableDefinitionSource): Promise<CompiledPlan> {
    const plan = compilePlan(definitionOf(source));
    await this.store.registerPlan(plan.record);
    this.byHash.set(plan.hash, plan);
    this.byName.set(plan.name, plan);
    return plan;
  }

  /** The plans registered in this runtime, newest registration of each name last. */
  get plans(): CompiledPlan[] {
    return [...this.byHash.values()];
  }

  /**
   * Submits a run of `workflow` (a registered name, a plan, or a plan hash) on `session`. The
   * session becomes checkpoint 0, encoded against the newest checkpoint of the same session (or
   * its lineage parents) so a conversation's runs and forks share their stored chunks.
   *
   * @throws {DurableError} `unknown_plan`, `idempotency_conflict`, `session_busy`, `invalid_argument`.
   */
  async submit(
    workflow: string | CompiledPlan,
    session: Session,
    options: SubmitOptions = {},
  ): Promise<RunRecord> {
    const planHash =
      typeof workflow === "string"
        ? HASH.test(workflow)
          ? workflow
          : this.byName.get(workflow)?.hash
        : workflow.hash;
    if (planHash === undefined) {
      throw new DurableError(
        "unknown_plan",
        `No workflow named ${JSON.stringify(workflow)} is registered in this runtime; registered: ${[...this.byName.keys()].join(", ") || "none"}.`,
        { details: { workflow } },
      );
    }
    const entry = this.byHash.get(planHash)?.entry ?? (await this.entryOf(planHash));
    const tenantId = options.tenantId ?? this.tenantId;
    const priority = options.priority ?? 0;
    if (!Number.isInteger(priority) || priority < -100 || priority > 100) {
      throw new DurableError(
        "invalid_argument",
        `Priority must be an integer from -100 to 100, got ${priority}.`,
      );
    }
    const deadline = options.deadline === undefined ? undefined : +options.deadline;
    const notBefore = options.notBefore === undefined ? undefined : +options.notBefore;
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
    // A worker of this runtime with a free slot for the plan: the submission claims the run for it
    // (in its own transaction, when the run may start at once), so the run starts without a claim.
    // Only on a store for several processes: on an embedded one (one connection, every statement
    // in turn) a claim is cheap and a busy worker does better to take the runs queued meanwhile in
    // one claim and to end them in shared statements (ADR 0018, "Throughput, fifth pass").
    const local =
      this.store.capabilities.claimOnSubmit === true &&
      this.store.capabilities.multiProcess &&
      (notBefore === undefined || notBefore <= Date.now())
        ? [...this.workers].find((worker) => worker.reserveSlot(planHash))
        : undefined;
    const claim = local ? { workerId: local.workerId, leaseMs: local.leaseMs } : undefined;
    let adopted = false;
    const settle = this.submitted.begin(tenantId, session.id);
    const startedAt = performance.now();
    try {
      // A session this runtime has not seen checkpointed is tried as a new one first (one round
      // trip); the store refuses if it has a head after all, and the submission is encoded against it.
      let result: { readonly run: RunRecord; readonly created: boolean } | undefined;
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
      const submitInput = (checkpoint: CheckpointWrite) => ({
        ...input(checkpoint),
        ...(claim ? { claim } : {}),
      });
      if (this.store.submitIfNew && !this.checkpointed.has(session.id))
        result = await this.store.submitIfNew(submitInput(encoded.write), sessionIds, hooks);
      if (result === undefined) {
        const head = await this.store.findSessionHead(tenantId, sessionIds);
        encoded = encodeCheckpoint(session, head ? baseOf(head) : null, fields);
        result = await this.store.submit(submitInput(encoded.write), hooks);
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

  private async entryOf(planHash: string): Promise<string> {
    const plan = await this.store.getPlan(planHash);
    if (!plan) {
      throw new DurableError("unknown_plan", `No plan ${planHash} is registered in the store.`, {
        details: { planHash },
      });
    }
    return String(plan.definition.entry);
  }

  /** The run, or `undefined`. */
  get(runId: string, tenantId?: string): Promise<RunRecord | undefined> {
    return this.store.getRun(runId, tenantId);
  }

  /** Cancels a run; the worker holding it aborts the step's signal. */
  cancel(runId: string, reason?: string): Promise<RunRecord> {
    return this.store.cancel(runId, reason === undefined ? {} : { reason });
  }

  /**
   * Waits until the run is terminal (or parked, with `parked: true`), woken by its event
   * notifications rather than by polling.
   *
   * @throws {DurableError} `run_not_found`; the signal's reason when `signal` fires.
   */
  async wait(runId: string, options: { signal?: AbortSignal; parked?: boolean } = {}): Promise<RunRecord> {
    let wake: (() => void) | undefined;
    let pending = false;
    const done = (status: RunStatus) =>
      isTerminal(status) || (options.parked === true && (status === "waiting" || status === "needs_review"));
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
    let unread = since !== undefined && this.signals.heard?.(runId, since) === null;
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
        if (known) return known;
        const run = await this.store.getRun(runId);
        if (!run) throw new DurableError("run_not_found", `No run ${runId}.`, { details: { runId } });
        if (done(run.status)) return run;
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

  /** Waits for the run to succeed and returns its final Session. @throws a `DurableError` with the run's error otherwise. */
  async result(runId: string, options: { signal?: AbortSignal } = {}): Promise<Session> {
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
    return this.session(runId);
  }

  /** The Session of the run's latest (or `sequence`) checkpoint. */
  async session(runId: string, sequence?: number): Promise<Session> {
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
    options: { after?: number; signal?: AbortSignal; parked?: boolean } = {},
  ): AsyncGenerator<RunEvent> {
    return followRun(this.store, this.signals, runId, {
      ...options,
      live: false,
    }) as AsyncGenerator<RunEvent>;
  }

  /**
   * The run's events for a live view (server-sent events, a terminal UI): the stored events after
   * `after` first, then the ones committed since and the live ones steps publish with
   * `ctx.emitLive` (token deltas), with no gap and no duplicate among the stored ones. Ends after
   * the event that ends the run (or parks it, with `parked: true`).
   *
   * @throws {DurableError} `run_not_found`; the signal's reason when `signal` fires.
   */
  stream(runId: string, options: FollowRunOptions = {}): AsyncGenerator<FollowedEvent> {
    return followRun(this.store, this.signals, runId, options);
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
   * Shuts the runtime down so the process can exit: stops every worker made by {@link worker}
   * (with `drain`, the default, once the runs in flight have ended; with
   * `drain: false` they are aborted and given back to the queue at once), then closes the signals
   * given to the runtime (when they are not the store's own) and the store. Idempotent; a worker
   * cannot be made afterwards.
   */
  close(options: { drain?: boolean } = {}): Promise<void> {
    this.closing ??= (async () => {
      await Promise.allSettled([...this.workers].map((worker) => worker.stop(options)));
      this.workers.clear();
      if (this.signals !== this.store.signals) await this.signals.close().catch(() => {});
      await this.store.close();
    })();
    return this.closing;
  }
}

/** Creates a {@link DurableRuntime} over a store. */
export function createDurableRuntime(options: DurableRuntimeOptions): DurableRuntime {
  return new DurableRuntime(options);
}
