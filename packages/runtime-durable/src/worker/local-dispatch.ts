import type { Session } from "@openrath/core";
import { BoundedMap } from "@openrath/core/backend";
import type { CheckpointBase } from "../checkpoint/delta-codec.js";
import type { Claim, RunRecord } from "../contract/run-records.js";
import type { FreshVisits } from "./fresh-visits.js";

/**
 * How many submitted sessions, ended runs, submission times and checkpointed session ids one
 * runtime keeps (the oldest go first; an ended run's record is about 1 KB). What a burst pushes
 * out is read back from the store. See ADR 0018 decision 5.
 */
const RECENT_LIMIT = 4096;

interface Handed {
  readonly runId: string;
  readonly session: Session;
  readonly base: CheckpointBase;
  readonly checkpointId: number;
}

/**
 * Sessions this process submitted, kept until a worker of the same runtime claims their run: the
 * first step then starts from the Session in memory instead of reading checkpoint 0 back. Only a
 * run still at the checkpoint it was submitted with matches; anything else is read from the store.
 *
 * A worker may claim a run before the submitting call has its answer back (another connection's
 * reply can be handled first), so a submission in flight is registered by its session before it
 * is sent, and a claim of that session waits for it.
 */
class SubmittedSessions {
  private readonly entries = new BoundedMap<string, Handed>(RECENT_LIMIT);
  private readonly inFlight = new Map<string, Set<Promise<Handed | undefined>>>();

  begin(tenantId: string, sessionId: string): (handed?: Handed) => void {
    const key = `${tenantId}\u0000${sessionId}`;
    let settle!: (handed: Handed | undefined) => void;
    const promise = new Promise<Handed | undefined>((resolve) => {
      settle = resolve;
    });
    let set = this.inFlight.get(key);
    if (!set) {
      set = new Set();
      this.inFlight.set(key, set);
    }
    set.add(promise);
    return (handed) => {
      set.delete(promise);
      if (set.size === 0 && this.inFlight.get(key) === set) this.inFlight.delete(key);
      if (handed) this.hand(handed);
      settle(handed);
    };
  }

  hand(handed: Handed): void {
    this.entries.set(handed.runId, handed);
  }

  async take(
    run: RunRecord,
  ): Promise<{ readonly session: Session; readonly base: CheckpointBase } | undefined> {
    if (run.checkpointSeq !== 0) return undefined;
    let entry = this.entries.get(run.id);
    if (entry === undefined) {
      const pending = this.inFlight.get(`${run.tenantId}\u0000${run.sessionId}`);
      if (pending) entry = (await Promise.all(pending)).find((handed) => handed?.runId === run.id);
    }
    if (entry === undefined) return undefined;
    this.entries.delete(run.id);
    return run.checkpointId === entry.checkpointId ? entry : undefined;
  }
}

/** A worker as local dispatch sees it: what its runtime's submissions may start on it. */
export interface LocalWorker {
  readonly workerId: string;
  readonly leaseMs: number;
  /** Whether it can start a run of `planHash` now, beside the `reserved` slots it holds already. */
  hasRoom(planHash: string, reserved: number): boolean;
  /** Starts a run its submission claimed for it, in the slot reserved for it. */
  adopt(claim: Claim): void;
  /** A reserved slot went unused: the worker may claim with it. */
  wake(): void;
}

/** The slots one worker holds for submissions that claim their run for it. */
export class WorkerSlots {
  private held = 0;
  private whenIdle: (() => void) | undefined;

  constructor(readonly worker: LocalWorker) {}

  /** Slots held now: the worker's own claims leave them free. */
  get reserved(): number {
    return this.held;
  }

  /** Resolves once no slot is held: every reservation was adopted or released. */
  idle(): Promise<void> {
    if (this.held === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.whenIdle = resolve;
    });
  }

  hold(planHash: string): boolean {
    if (!this.worker.hasRoom(planHash, this.held)) return false;
    this.held++;
    return true;
  }

  /** Ends one reservation: its slot goes to the adopted run, or back to the worker. */
  end(adopted?: Claim): void {
    this.held = Math.max(0, this.held - 1);
    if (adopted) this.worker.adopt(adopted);
    else this.worker.wake();
    if (this.held === 0) {
      const idle = this.whenIdle;
      this.whenIdle = undefined;
      idle?.();
    }
  }
}

/**
 * One slot a worker holds for a submission that claims its run for it (ADR 0018 decision 4).
 * Ends exactly once: adopted when the store leased the run to the worker, else released.
 */
export class Reservation {
  private open = true;
  /** The lease the submission asks the store to give its run. */
  readonly claim: { readonly workerId: string; readonly leaseMs: number };

  constructor(
    private readonly sessions: SubmittedSessions,
    private readonly slots: WorkerSlots,
  ) {
    this.claim = { workerId: slots.worker.workerId, leaseMs: slots.worker.leaseMs };
  }

  /**
   * Starts `run` in the slot, from `session` in memory, when the store leased it to the worker;
   * `false` (and nothing done) otherwise, or once the reservation has ended.
   */
  adopt(run: RunRecord, session: Session, baseAt: (checkpointId: number) => CheckpointBase): boolean {
    const { workerId } = this.claim;
    if (!this.open || run.status !== "running" || run.leaseHolder !== workerId) return false;
    this.open = false;
    this.sessions.hand({
      runId: run.id,
      session,
      base: baseAt(run.checkpointId),
      checkpointId: run.checkpointId,
    });
    this.slots.end({
      run,
      fence: { runId: run.id, token: run.fencingToken, workerId },
      leaseExpiresAt: run.leaseExpiresAt ?? 0,
    });
    return true;
  }

  /** Gives the slot back, unless the run was adopted. */
  release(): void {
    if (!this.open) return;
    this.open = false;
    this.slots.end();
  }
}

/**
 * What one runtime and the workers it made share in the process, so neither calls into the
 * other: the sessions it submitted (a worker starts their first step from memory), slots its
 * workers lend to claim-on-submit, and the runs they ended (a waiter here returns without a read).
 */
export class LocalDispatch {
  private readonly sessions = new SubmittedSessions();
  private readonly slots: WorkerSlots[] = [];
  private readonly endedRuns = new BoundedMap<string, RunRecord>(RECENT_LIMIT);
  private readonly endWaiters = new Map<string, Set<() => void>>();
  /** When this runtime sent its recent submissions (`performance.now()`, taken before the store call). */
  private readonly sentAt = new BoundedMap<string, number>(RECENT_LIMIT);
  /** Session ids submitted or read back here: they have checkpoints, so no new-session attempt. */
  private readonly checkpointed = new BoundedMap<string, true>(RECENT_LIMIT);

  /** Enrols a worker: submissions may claim runs for it while it has room. */
  enrol(worker: LocalWorker): WorkerSlots {
    const slots = new WorkerSlots(worker);
    this.slots.push(slots);
    return slots;
  }

  /** A slot held for one run of `planHash` on the first enrolled worker with room for it. */
  reserve(planHash: string): Reservation | undefined {
    const slots = this.slots.find((s) => s.hold(planHash));
    return slots ? new Reservation(this.sessions, slots) : undefined;
  }

  /**
   * Registers a submission of `sessionId` about to be sent; call the returned function with the
   * run (and its session and base) once it is answered, or with nothing when it failed or the
   * run needs no hand-off.
   */
  submitting(tenantId: string, sessionId: string): (handed?: Handed) => void {
    return this.sessions.begin(tenantId, sessionId);
  }

  /** The submitted session of a freshly claimed `run`, once; `undefined` when it moved on or is unknown. */
  takeSession(
    run: RunRecord,
  ): Promise<{ readonly session: Session; readonly base: CheckpointBase } | undefined> {
    return this.sessions.take(run);
  }

  /** Notes a run this runtime created, with when its submission was sent. */
  submitted(runId: string, sentAt: number): void {
    this.sentAt.set(runId, sentAt);
  }

  /** When this runtime sent the submission that created `runId`, while it is remembered. */
  submittedAt(runId: string): number | undefined {
    return this.sentAt.get(runId);
  }

  /** Whether `sessionId` is known here to have checkpoints in the store. */
  hasCheckpoints(sessionId: string): boolean {
    return this.checkpointed.has(sessionId);
  }

  /** Notes that `sessionId` has checkpoints in the store (the newest noted is forgotten last). */
  checkpointedSession(sessionId: string): void {
    this.checkpointed.delete(sessionId);
    this.checkpointed.set(sessionId, true);
  }

  /** A worker here ended `run`: keeps its final record and wakes the run's waiters here at once. */
  ended(run: RunRecord): void {
    this.endedRuns.set(run.id, run);
    for (const wake of this.endWaiters.get(run.id) ?? []) wake();
  }

  /** The final record of a run a worker here ended, while it is remembered. */
  endedRun(runId: string): RunRecord | undefined {
    return this.endedRuns.get(runId);
  }

  /** Calls `wake` whenever a worker here ends `runId`, until the returned function is called. */
  onEnd(runId: string, wake: () => void): () => void {
    const waiters = this.endWaiters.get(runId) ?? new Set();
    this.endWaiters.set(runId, waiters);
    waiters.add(wake);
    return () => {
      waiters.delete(wake);
      if (waiters.size === 0 && this.endWaiters.get(runId) === waiters) this.endWaiters.delete(runId);
    };
  }
}

/** @internal What a runtime gives each worker it makes. */
export interface WorkerLink {
  readonly dispatch: LocalDispatch;
  /** The worker's step visits known to start with an empty journal (its journal reads them). */
  readonly fresh?: FreshVisits;
}
