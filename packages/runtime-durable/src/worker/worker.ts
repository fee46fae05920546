import { hostname } from "node:os";
import { type CallPolicy, OpenRathError } from "@openrath/core";
import { backoffDelay } from "@openrath/core/backend";
import { DurableError } from "../contract/durable-error.js";
import type { Claim, Fence } from "../contract/run-records.js";
import type { RunStoreV1 } from "../contract/run-store.js";
import type { SignalsV1 } from "../contract/signals.js";
import type { StepMiddleware } from "../contract/step-context.js";
import type { CompiledPlan } from "../definition/compile.js";
import { executeRun } from "./execute-run.js";
import type { WorkerLink, WorkerSlots } from "./local-dispatch.js";
import { type PeriodicJobOptions, PeriodicJobs } from "./periodic-jobs.js";
import { jsonLinesLog, type WorkerLog } from "./worker-log.js";
import type { WorkerEvent, WorkerObserver } from "./worker-observer.js";

/** Options of a {@link DurableWorker}. */
export interface WorkerOptions {
  /**
   * The worker's identity (default `OPENRATH_WORKER_ID`, else `<hostname>:<pid>`). Restarting with
   * the same identity takes the previous incarnation's runs back at once.
   */
  readonly workerId?: string;
  /** Runs executed at the same time (default 4). */
  readonly concurrency?: number;
  /** Lease length in milliseconds (default 30 000); heartbeats renew it every third of it. */
  readonly leaseMs?: number;
  /** Wraps every step attempt (the journal and effect ledger install themselves here). */
  readonly middleware?: readonly StepMiddleware[];
  /**
   * A call policy applied to every step: put on each step's context (`ctx.policy`), so every
   * model and tool call of `agent.run(session, ctx)` is judged before it is made (see ADR 0029).
   */
  readonly policy?: CallPolicy;
  /**
   * Structured log lines: one per event that matters (started, runs claimed — a count per
   * heartbeat —, a lease lost, the store unreachable and back, a park, runs taken back or
   * requeued, stopping and stopped), never one per step; the steps' `ctx.logger` lines go here too.
   * Every line's data carries `workerId`. Default: JSON lines on standard error from level `info`
   * ({@link jsonLinesLog}; `OPENRATH_LOG_LEVEL=silent` turns them off).
   */
  readonly log?: WorkerLog;
  /**
   * Structured events for metrics (`@openrath/otel`'s worker observer): each claim with its round
   * trip, runs adopted from submissions, leases lost, expired leases requeued, runs taken back at
   * start. Called synchronously; what it throws is ignored.
   */
  readonly observer?: WorkerObserver;
  /**
   * How long {@link DurableWorker.stop} lets the steps in flight finish and commit before it
   * aborts them (default 10 000 ms). Set the orchestrator's termination grace above it.
   */
  readonly drainMs?: number;
  /**
   * The periodic jobs on a store that has them: firing due schedules and sending webhook
   * deliveries, every second by default (`{ tickMs: false }` leaves them to other workers).
   */
  readonly jobs?: PeriodicJobOptions;
}

/** Options of {@link DurableWorker.stop}. */
export interface StopOptions {
  /** Overrides the worker's `drainMs` for this stop; 0 aborts the steps in flight at once. */
  readonly drainMs?: number;
  /** `false` is `drainMs: 0`. */
  readonly drain?: boolean;
}

interface Active {
  readonly claim: Claim;
  fence: Fence;
  readonly controller: AbortController;
  /** Local monotonic time by which the lease has surely expired unless renewed. */
  expiresBy: number;
  readonly done: Promise<void>;
}

/**
 * Claims and executes runs of the plans it holds, several at once. It sleeps on the store's
 * `work` signal (no polling loop), aborts a step's signal on the `cancel` signal, renews its
 * leases every third of the lease (and sweeps expired leases and deadlines then), and aborts any
 * step whose lease it learns is gone.
 */
export class DurableWorker {
  /** This worker's identity. */
  readonly workerId: string;
  readonly concurrency: number;
  readonly leaseMs: number;
  private readonly plans: Map<string, CompiledPlan>;
  private readonly active = new Map<string, Active>();
  /** Slots held for runs its runtime is submitting with a claim for this worker. */
  private readonly slots: WorkerSlots | undefined;
  private readonly log: WorkerLog;
  private readonly observer: WorkerObserver | undefined;
  /** How long a stop waits for the steps in flight (see {@link WorkerOptions.drainMs}). */
  readonly drainMs: number;
  /** Set by {@link stop}: each run hands its lease back after the step in flight commits. */
  private stopping = false;
  /** Runs claimed and ended since the last activity line (logged once per heartbeat). */
  private readonly counts = { claimed: 0, ended: 0 };
  /** When the store first failed to answer a claim in the current outage (`performance.now()`), or 0. */
  private unreachableSince = 0;
  /** Runs whose cancel signal is being checked against the store. */
  private readonly confirming = new Set<string>();
  private readonly middleware: readonly StepMiddleware[];
  private readonly policy: CallPolicy | undefined;
  private running = false;
  private wakeUp: (() => void) | undefined;
  private woken = false;
  /**
   * Whether a claim may find work: set by `work` signals, the heartbeat, the retry timer and a
   * claim the store did not report `drained`; cleared when a claim is sent. A run ending wakes the
   * loop but, after a drained claim, claims nothing until a signal (or the heartbeat) says to.
   */
  private mayHaveWork = true;
  private loop: Promise<void> | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private wakeTimer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => Promise<void>)[] = [];
  private readonly jobs: PeriodicJobs;

  constructor(
    private readonly store: RunStoreV1,
    private readonly signals: SignalsV1,
    plans: readonly CompiledPlan[],
    options: WorkerOptions = {},
    /** @internal What the runtime that made this worker shares with it. */
    private readonly link?: WorkerLink,
  ) {
    this.workerId = options.workerId ?? process.env.OPENRATH_WORKER_ID ?? `${hostname()}:${process.pid}`;
    this.concurrency = Math.max(1, Math.floor(options.concurrency ?? 4));
    this.leaseMs = Math.max(30, options.leaseMs ?? 30_000);
    this.plans = new Map(plans.map((p) => [p.hash, p]));
    const given = options.log;
    // Every line names the worker, whichever log it goes to.
    this.log = given
      ? (level, message, data) => given(level, message, { workerId: this.workerId, ...data })
      : jsonLinesLog({ fields: { workerId: this.workerId } });
    this.drainMs = Math.max(0, options.drainMs ?? 10_000);
    this.observer = options.observer;
    this.middleware = options.middleware ?? [];
    this.policy = options.policy;
    this.jobs = new PeriodicJobs(store, this.log, options.jobs);
    if (this.plans.size === 0)
      throw new DurableError("invalid_argument", "A worker needs at least one registered plan to execute.");
    this.slots = link?.dispatch.enrol({
      workerId: this.workerId,
      leaseMs: this.leaseMs,
      hasRoom: (planHash, reserved) =>
        this.running && this.plans.has(planHash) && this.active.size + reserved < this.concurrency,
      // Even while stopping: `stop` waits for the reserved slots, then drains (or releases) this run.
      adopt: (claim) => {
        this.counts.claimed++;
        this.tell({
          type: "adopted",
          workerId: this.workerId,
          runId: claim.run.id,
          workflow: claim.run.workflow,
        });
        this.launch(claim);
      },
      wake: () => this.wake(),
    });
  }

  /** The plan hashes this worker advertises and claims. */
  get planHashes(): string[] {
    return [...this.plans.keys()];
  }

  /** Ids of the runs executing now. */
  get activeRuns(): string[] {
    return [...this.active.keys()];
  }

  /**
   * Starts: subscribes to work and cancel signals, takes back the runs its identity still holds,
   * and begins claiming.
   */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.stopping = false;
    this.mayHaveWork = true;
    this.unsubscribe.push(
      await this.signals.subscribe("work", (signal) => {
        if (
          signal.kind === "work" &&
          (signal.planHash === undefined || signal.planHash === "" || this.plans.has(signal.planHash))
        )
          this.hint();
      }),
      await this.signals.subscribe("cancel", (signal) => {
        if (signal.kind === "cancel" && this.active.has(signal.runId)) this.confirmCancel(signal.runId);
      }),
    );
    const reclaimed = await this.store.reclaim({
      workerId: this.workerId,
      planHashes: this.planHashes,
      leaseMs: this.leaseMs,
    });
    for (const claim of reclaimed) this.launch(claim);
    if (reclaimed.length > 0)
      this.tell({ type: "reclaimed", workerId: this.workerId, runs: reclaimed.length });
    this.log("info", "worker started", {
      plans: [...new Set([...this.plans.values()].map((p) => `${p.name}@${p.version}`))],
      concurrency: this.concurrency,
      leaseMs: this.leaseMs,
      drainMs: this.drainMs,
      store: this.store.name,
      signals: this.signals.name,
    });
    if (reclaimed.length > 0)
      this.log("info", "took back runs this worker identity held", { runs: reclaimed.length });
    this.heartbeatTimer = setInterval(
      () => {
        this.beat().catch(() => {});
      },
      Math.max(10, Math.floor(this.leaseMs / 3)),
    );
    this.loop = this.claimLoop();
    this.jobs.start();
  }

  /**
   * Stops and hands the work over: stops claiming at once, lets each step in flight finish and
   * commit (within `drainMs`), then gives each run's lease back to the queue so another worker
   * continues it at once, from the step after the last commit. A step still running at the
   * deadline is aborted (its signal fires with `worker_stopping`; what its journal recorded stays)
   * and its run is handed back too. No run is run to its end here, and no committed step is lost
   * or run again.
   */
  async stop(options: StopOptions = {}): Promise<void> {
    if (!this.running) return;
    const drainMs = options.drain === false ? 0 : Math.max(0, options.drainMs ?? this.drainMs);
    this.running = false;
    this.stopping = true;
    this.wake();
    await this.jobs.stop();
    await this.loop;
    // Submissions claiming a run for this worker are in flight: their runs are this worker's to hand back.
    await this.slots?.idle();
    const inFlight = [...this.active.values()];
    this.log("info", "worker stopping", { active: inFlight.length, drainMs });
    const all = Promise.allSettled(inFlight.map((a) => a.done));
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<"deadline">((resolve) => {
      timer = setTimeout(() => resolve("deadline"), drainMs);
    });
    const aborted: string[] = [];
    if ((await Promise.race([all, deadline])) === "deadline") {
      for (const a of this.active.values()) {
        aborted.push(a.claim.run.id);
        a.controller.abort(
          new DurableError(
            "worker_stopping",
            `The worker is stopping and its drain deadline (${drainMs} ms) passed: the step is aborted and run ${a.claim.run.id} handed to another worker.`,
            { details: { runId: a.claim.run.id, workerId: this.workerId } },
          ),
        );
      }
      await all;
    }
    clearTimeout(timer);
    clearInterval(this.heartbeatTimer);
    clearTimeout(this.wakeTimer);
    for (const stop of this.unsubscribe.splice(0)) await stop().catch(() => {});
    this.log("info", "worker stopped", { runs: inFlight.length, aborted: aborted.length });
  }

  /** Hands `event` to the observer; an observer's failure never reaches the worker. */
  private tell(event: WorkerEvent) {
    if (this.observer === undefined) return;
    try {
      this.observer(event);
    } catch {
      // Metrics must not break the worker they watch.
    }
  }

  private leaseLost(a: Active, reason: string) {
    this.tell({
      type: "lease_lost",
      workerId: this.workerId,
      runId: a.claim.run.id,
      workflow: a.claim.run.workflow,
      reason,
    });
  }

  /** Wakes the claim loop to claim: something may be claimable. */
  private hint() {
    this.mayHaveWork = true;
    this.wake();
  }

  private wake() {
    this.woken = true;
    const wake = this.wakeUp;
    this.wakeUp = undefined;
    wake?.();
  }

  private sleep(): Promise<void> {
    if (this.woken || !this.running) return Promise.resolve();
    return new Promise((resolve) => {
      this.wakeUp = resolve;
    });
  }

  private async claimLoop(): Promise<void> {
    let failures = 0;
    while (this.running) {
      this.woken = false;
      const slots = this.concurrency - this.active.size - (this.slots?.reserved ?? 0);
      if (slots > 0 && this.mayHaveWork) {
        this.mayHaveWork = false;
        const sent = performance.now();
        try {
          const claims = await this.store.claim({
            workerId: this.workerId,
            planHashes: this.planHashes,
            leaseMs: this.leaseMs,
            limit: slots,
          });
          this.tell({
            type: "claim",
            workerId: this.workerId,
            claimed: claims.length,
            durationMs: performance.now() - sent,
            failed: false,
          });
          if (failures > 0) {
            this.log("info", "store reachable again", {
              failures,
              unreachableMs: Math.round(performance.now() - this.unreachableSince),
            });
            this.unreachableSince = 0;
          }
          failures = 0;
          this.counts.claimed += claims.length;
          for (const claim of claims) this.launch(claim);
          // Unless the store says the queue is drained, more may be claimable (a full claim may have
          // left runs behind; a capped tenant's run may become claimable when one of its runs ends here).
          if (claims.drained !== true) this.mayHaveWork = true;
          if (claims.length === slots) continue;
          if (claims.nextAt) this.scheduleWake(claims.nextAt);
        } catch (error) {
          this.mayHaveWork = true;
          failures++;
          this.tell({
            type: "claim",
            workerId: this.workerId,
            claimed: 0,
            durationMs: performance.now() - sent,
            failed: true,
          });
          // One line when the outage starts; the next when the store answers again.
          if (failures === 1) {
            this.unreachableSince = performance.now();
            this.log("warn", "claim failed; retrying with backoff", {
              code: (error as { code?: unknown }).code,
              error: (error as Error).message,
            });
          }
          // The store is unreachable: try again after a backoff (the only timed retry in the loop).
          await new Promise((r) => setTimeout(r, backoffDelay(failures + 1, { baseMs: 50, maxMs: 2000 })));
          continue;
        }
      }
      await this.sleep();
      // Several wake-ups at once (runs ending, work signals) become one claim for all free slots.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Sets a timer for the earliest scheduled retry (`notBefore`), judged by the database clock. */
  private scheduleWake(at: number) {
    clearTimeout(this.wakeTimer);
    this.store
      .now()
      .then((now) => {
        this.wakeTimer = setTimeout(() => this.hint(), Math.max(0, at - now) + 5);
      })
      .catch(() => {});
  }

  private launch(claim: Claim) {
    const controller = new AbortController();
    const entry = {
      claim,
      fence: claim.fence,
      controller,
      expiresBy: performance.now() + this.leaseMs,
    } as Omit<Active, "done"> & { done?: Promise<void> };
    // The store gave this worker a new lease on a run it still runs (its lease was lost: requeued
    // after expiry, or a database crash lost the claim): the old attempt's token is stale, stop it.
    this.active.get(claim.run.id)?.controller.abort(
      new DurableError("lease_lost", `Run ${claim.run.id} was claimed again under a new lease.`, {
        details: { runId: claim.run.id },
      }),
    );
    this.active.set(claim.run.id, entry as Active);
    entry.done = (async () => {
      try {
        const plan = this.plans.get(claim.run.planHash);
        if (!plan)
          throw new DurableError(
            "unknown_plan",
            `Claimed run ${claim.run.id} of a plan this worker does not hold.`,
          );
        await executeRun(
          {
            store: this.store,
            plan,
            middleware: this.middleware,
            ...(this.policy ? { policy: this.policy } : {}),
            log: this.log,
            write: (fence, work) => this.write(fence, work),
            signals: this.signals,
            leaseMs: this.leaseMs,
            stopping: () => this.stopping,
            ...(this.link ? { dispatch: this.link.dispatch } : {}),
            ...(this.link?.fresh ? { fresh: this.link.fresh } : {}),
            // The run is over once its end is written: its slot is free for the next submission.
            ended: (run) => {
              this.counts.ended++;
              this.settle(claim.run.id, entry as Active);
              this.link?.dispatch.ended(run);
            },
          },
          claim,
          controller,
        );
      } catch (error) {
        this.log("error", "run execution stopped", { runId: claim.run.id, error: (error as Error).message });
      } finally {
        this.settle(claim.run.id, entry as Active);
        this.wake();
      }
    })();
  }

  /** Forgets the run's attempt `entry`, unless a newer claim of the run has replaced it. */
  private settle(runId: string, entry: Active) {
    if (this.active.get(runId) !== entry) return;
    this.link?.fresh?.forget(runId);
    this.active.delete(runId);
  }

  /**
   * A cancel signal is a hint, never authority (anyone who can publish on the signals' channel can
   * send one): the step is aborted only once the store says the run is cancelled. Otherwise the
   * signal is dropped; a real cancel also reaches the step at the next heartbeat.
   */
  private confirmCancel(runId: string) {
    if (this.confirming.has(runId)) return;
    this.confirming.add(runId);
    this.store
      .getRun(runId)
      .then((run) => {
        const active = this.active.get(runId);
        if (run?.status === "cancelled" && active && !active.controller.signal.aborted) {
          active.controller.abort(
            new DurableError("cancelled", `Run ${runId} was cancelled.`, { details: { runId } }),
          );
        } else if (run?.status !== "cancelled") {
          this.log("warn", "ignored a cancel signal the store does not confirm", {
            runId,
            status: run?.status ?? null,
          });
        }
      })
      .catch(() => {})
      .finally(() => this.confirming.delete(runId));
  }

  /** A worker write, retried while the store is unreachable and the lease may still be valid. */
  private async write<T>(fence: Fence, work: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await work();
      } catch (error) {
        const active = this.active.get(fence.runId);
        if (
          !OpenRathError.isInstance(error, "store_unavailable") ||
          !active ||
          performance.now() > active.expiresBy
        )
          throw error;
        await new Promise((r) => setTimeout(r, backoffDelay(attempt, { baseMs: 50, maxMs: 1000 })));
      }
    }
  }

  private async beat(): Promise<void> {
    if (this.active.size > 0) {
      const entries = [...this.active.values()];
      const sent = performance.now();
      try {
        const result = await this.store.heartbeat(
          entries.map((a) => a.fence),
          this.leaseMs,
        );
        for (const a of entries) {
          if (result.renewed.has(a.claim.run.id)) a.expiresBy = sent + this.leaseMs;
          const lost = result.lost.get(a.claim.run.id);
          if (lost && !a.controller.signal.aborted) {
            const code = lost.status === "cancelled" ? "cancelled" : "lease_lost";
            if (code === "lease_lost") {
              this.log("warn", "lease lost", {
                runId: a.claim.run.id,
                status: lost.status,
                reason: lost.reason,
              });
              this.leaseLost(a, lost.reason);
            }
            a.controller.abort(
              new DurableError(code, `Run ${a.claim.run.id}: ${lost.reason}.`, {
                details: { runId: a.claim.run.id, ...lost },
              }),
            );
          }
        }
      } catch (error) {
        this.log("warn", "heartbeat failed", { error: (error as Error).message });
      }
      // Without a renewal the lease is gone by now (the database may have requeued it): stop the step.
      const now = performance.now();
      for (const a of entries) {
        if (now > a.expiresBy && !a.controller.signal.aborted) {
          this.log("warn", "lease lost", { runId: a.claim.run.id, reason: "not renewed in time" });
          this.leaseLost(a, "not renewed in time");
          a.controller.abort(
            new DurableError("lease_lost", `Run ${a.claim.run.id}: the lease could not be renewed in time.`),
          );
        }
      }
    }
    try {
      const swept = await this.store.sweep();
      if (swept.requeued > 0 || swept.timedOut > 0) {
        this.log("info", "requeued runs with expired leases, ended runs past their deadline", { ...swept });
        this.tell({
          type: "leases_expired",
          workerId: this.workerId,
          requeued: swept.requeued,
          timedOut: swept.timedOut,
        });
      }
    } catch {
      // The next beat sweeps again.
    }
    if (this.counts.claimed > 0 || this.counts.ended > 0) {
      this.log("info", "runs claimed and ended since the last heartbeat", {
        ...this.counts,
        active: this.active.size,
      });
      this.counts.claimed = 0;
      this.counts.ended = 0;
    }
    // The slow safety sweep: with a free slot, look for work once per beat, so a wake-up signal
    // lost while a signals connection was away delays a run by at most a beat, never strands it.
    if (this.running && this.active.size < this.concurrency) this.hint();
  }
}
