import { hostname } from "node:os";
import { OpenRathError } from "@openrath/core";
import type { Claim, Fence, RunRecord } from "../contract/records.js";
import type { RunStoreV1 } from "../contract/run-store.js";
import type { SignalsV1 } from "../contract/signals.js";
import type { StepLogger, StepMiddleware } from "../contract/step-context.js";
import type { CompiledPlan } from "../definition/compile.js";
import { DurableError } from "../errors.js";
import { executeRun } from "./execute-run.js";
import type { FreshVisits, SubmittedSessions } from "./handoff.js";

/**
 * What a runtime shares with the workers it makes (internal): the sessions it submitted and the
 * step visits known to start with an empty journal.
 */
export interface WorkerHints {
  readonly handoff?: SubmittedSessions;
  readonly fresh?: FreshVisits;
  /** Told of every run the worker ended, with its final record. */
  readonly ended?: (run: RunRecord) => void;
}

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
  /** Structured log lines (default: none). */
  readonly log?: (level: keyof StepLogger, message: string, data?: Record<string, unknown>) => void;
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
  /** Slots held for runs the runtime is submitting with a claim for this worker. */
  private reserved = 0;
  private reservationsSettled: (() => void) | undefined;
  private readonly log: NonNullable<WorkerOptions["log"]>;
  private readonly middleware: readonly StepMiddleware[];
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

  constructor(
    private readonly store: RunStoreV1,
    private readonly signals: SignalsV1,
    plans: readonly CompiledPlan[],
    options: WorkerOptions = {},
    /** @internal What the runtime that made this worker shares with it. */
    private readonly hints: WorkerHints = {},
  ) {
    this.workerId = options.workerId ?? process.env.OPENRATH_WORKER_ID ?? `${hostname()}:${process.pid}`;
    this.concurrency = Math.max(1, Math.floor(options.concurrency ?? 4));
    this.leaseMs = Math.max(30, options.leaseMs ?? 30_000);
    this.plans = new Map(plans.map((p) => [p.hash, p]));
    this.log = options.log ?? (() => {});
    this.middleware = options.middleware ?? [];
    if (this.plans.size === 0)
      throw new DurableError("invalid_argument", "A worker needs at least one registered plan to execute.");
  }

  /** The plan hashes this worker advertises and claims. */
  get planHashes(): string[] {
    return [...this.plans.keys()];
  }

  /**
   * @internal Holds a slot for a run of `planHash` that the runtime submits with a claim for this
   * worker; `false` when the worker is not running, lacks the plan or has no free slot. Every
   * `true` is followed by exactly one {@link adopt} or {@link releaseSlot}.
   */
  reserveSlot(planHash: string): boolean {
    if (!this.running || !this.plans.has(planHash)) return false;
    if (this.active.size + this.reserved >= this.concurrency) return false;
    this.reserved++;
    return true;
  }

  /** @internal Gives a reserved slot back: the submission created no run claimed for this worker. */
  releaseSlot(): void {
    this.reserved = Math.max(0, this.reserved - 1);
    this.wake();
    this.settleReservation();
  }

  /** @internal Starts a run its submission claimed for this worker, in the slot reserved for it. */
  adopt(claim: Claim): void {
    this.reserved = Math.max(0, this.reserved - 1);
    // Even while stopping: `stop` waits for the reserved slots, then drains (or releases) this run.
    this.launch(claim);
    this.settleReservation();
  }

  private settleReservation() {
    if (this.reserved === 0) {
      const settled = this.reservationsSettled;
      this.reservationsSettled = undefined;
      settled?.();
    }
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
        if (signal.kind !== "cancel") return;
        const active = this.active.get(signal.runId);
        active?.controller.abort(
          new DurableError("cancelled", `Run ${signal.runId} was cancelled.`, {
            details: { runId: signal.runId },
          }),
        );
      }),
    );
    const reclaimed = await this.store.reclaim({
      workerId: this.workerId,
      planHashes: this.planHashes,
      leaseMs: this.leaseMs,
    });
    for (const claim of reclaimed) this.launch(claim);
    if (reclaimed.length > 0)
      this.log("info", "took back runs of this worker identity", {
        workerId: this.workerId,
        runs: reclaimed.length,
      });
    this.heartbeatTimer = setInterval(
      () => {
        this.beat().catch(() => {});
      },
      Math.max(10, Math.floor(this.leaseMs / 3)),
    );
    this.loop = this.claimLoop();
  }

  /**
   * Stops claiming. With `drain` (default) waits for the runs in flight to end; otherwise aborts
   * them and gives them back to the queue so another worker continues at once.
   */
  async stop(options: { drain?: boolean } = {}): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.wake();
    await this.loop;
    // Submissions claiming a run for this worker are in flight: their runs are this worker's to drain or release.
    if (this.reserved > 0)
      await new Promise<void>((resolve) => {
        this.reservationsSettled = resolve;
      });
    if (options.drain === false) {
      const fences = [...this.active.values()].map((a) => a.fence);
      for (const a of this.active.values())
        a.controller.abort(new DurableError("lease_lost", "The worker is stopping."));
      await Promise.allSettled([...this.active.values()].map((a) => a.done));
      await Promise.allSettled(fences.map((f) => this.store.release(f)));
    } else {
      await Promise.allSettled([...this.active.values()].map((a) => a.done));
    }
    clearInterval(this.heartbeatTimer);
    clearTimeout(this.wakeTimer);
    for (const stop of this.unsubscribe.splice(0)) await stop().catch(() => {});
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
      const slots = this.concurrency - this.active.size - this.reserved;
      if (slots > 0 && this.mayHaveWork) {
        this.mayHaveWork = false;
        try {
          const claims = await this.store.claim({
            workerId: this.workerId,
            planHashes: this.planHashes,
            leaseMs: this.leaseMs,
            limit: slots,
          });
          failures = 0;
          for (const claim of claims) this.launch(claim);
          // Unless the store says the queue is drained, more may be claimable (a full claim may have
          // left runs behind; a capped tenant's run may become claimable when one of its runs ends here).
          if (claims.drained !== true) this.mayHaveWork = true;
          if (claims.length === slots) continue;
          if (claims.nextAt) this.scheduleWake(claims.nextAt);
        } catch (error) {
          this.mayHaveWork = true;
          failures++;
          this.log("warn", "claim failed", { error: (error as Error).message });
          // The store is unreachable: try again after a backoff (the only timed retry in the loop).
          await new Promise((r) => setTimeout(r, Math.min(2000, 50 * 2 ** Math.min(failures, 6))));
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
            log: this.log,
            write: (fence, work) => this.write(fence, work),
            signals: this.signals,
            leaseMs: this.leaseMs,
            ...this.hints,
            // The run is over once its end is written: its slot is free for the next submission.
            ended: (run) => {
              this.settle(claim.run.id, entry as Active);
              this.hints.ended?.(run);
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
    this.hints.fresh?.forget(runId);
    this.active.delete(runId);
  }

  /** A worker write, retried while the store is unreachable and the lease may still be valid. */
  private async write<T>(fence: Fence, work: () => Promise<T>): Promise<T> {
    let delay = 50;
    for (;;) {
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
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 1000);
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
          if (lost) {
            const code = lost.status === "cancelled" ? "cancelled" : "lease_lost";
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
          a.controller.abort(
            new DurableError("lease_lost", `Run ${a.claim.run.id}: the lease could not be renewed in time.`),
          );
        }
      }
    }
    try {
      const swept = await this.store.sweep();
      if (swept.requeued > 0 || swept.timedOut > 0) this.log("info", "swept", { ...swept });
    } catch {
      // The next beat sweeps again.
    }
    // The slow safety sweep: with a free slot, look for work once per beat, so a wake-up signal
    // lost while a signals connection was away delays a run by at most a beat, never strands it.
    if (this.running && this.active.size < this.concurrency) this.hint();
  }
}
