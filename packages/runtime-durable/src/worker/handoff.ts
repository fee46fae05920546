import type { Session } from "@openrath/core";
import { BoundedMap } from "@openrath/core/backend";
import type { CheckpointBase } from "../checkpoint/delta-codec.js";
import type { JournalStoreV1 } from "../contract/journal-store.js";
import type { Fence, RunRecord } from "../contract/run-records.js";

/**
 * How many submitted sessions are kept for this process's workers (the oldest go first). A burst of
 * submissions larger than this has its oldest runs read back from the store when claimed.
 */
const HANDOFF_LIMIT = 4096;

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
 * Entries of runs another process claims are dropped oldest first.
 *
 * A worker may claim a run before the submitting call has its answer back (another connection's
 * reply can be handled first), so a submission in flight is registered by its session before it
 * is sent, and a claim of that session waits for it.
 */
export class SubmittedSessions {
  private readonly entries = new BoundedMap<string, Handed>(HANDOFF_LIMIT);
  private readonly inFlight = new Map<string, Set<Promise<Handed | undefined>>>();

  /**
   * Registers a submission of `sessionId` about to be sent; call the returned function with the
   * run (and its session and base) once it is answered, or with nothing when it failed.
   */
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

  /** Keeps the session of a run this process submitted and claimed for one of its workers. */
  hand(handed: Handed): void {
    this.entries.set(handed.runId, handed);
  }

  /** The submitted session of a freshly claimed `run`, once; `undefined` when it moved on or is unknown. */
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

/**
 * Step visits this worker knows to have an empty journal: the first claim of a run (no earlier
 * lease ever existed, so nothing was journaled) and the visit that starts with a checkpoint this
 * worker just committed (the commit dropped the journal of earlier visits, and no other lease can
 * have written under this one). The step's journal opens from memory for those, without a read.
 */
export class FreshVisits {
  private readonly visits = new Map<string, { readonly token: number; readonly seq: number }>();

  /** Marks the visit starting at checkpoint `seq` of the fence's run as fresh. */
  mark(fence: Fence, seq: number): void {
    this.visits.set(fence.runId, { token: fence.token, seq });
  }

  /** Forgets the run (its execution ended on this worker). */
  forget(runId: string): void {
    this.visits.delete(runId);
  }

  /** The fresh visit of `fence`, once. */
  take(fence: Fence): number | undefined {
    const visit = this.visits.get(fence.runId);
    if (visit === undefined) return undefined;
    this.visits.delete(fence.runId);
    return visit.token === fence.token ? visit.seq : undefined;
  }

  /** `journal` whose `openStep` answers a fresh visit from memory and asks the store otherwise. */
  wrap(journal: JournalStoreV1): JournalStoreV1 {
    const openStep: JournalStoreV1["openStep"] = async (fence) => {
      const seq = this.take(fence);
      if (seq !== undefined) return { checkpointSeq: seq, entries: [], interrupts: [] };
      return journal.openStep(fence);
    };
    // An empty target: the journal itself may be frozen, and a proxy may not change a frozen property.
    return new Proxy({} as JournalStoreV1, {
      get(_, key) {
        if (key === "openStep") return openStep;
        const value = Reflect.get(journal, key, journal);
        return typeof value === "function" ? value.bind(journal) : value;
      },
    });
  }
}

/** How many runs a {@link RecentRuns} remembers (an ended run's record is about 1 KB). */
const RECENT_LIMIT = 4096;

/**
 * Something about each of the runs this process touched last, by run id, for `runtime.wait` in
 * the same process: the final records of runs its workers ended (a terminal run never changes
 * again, so the record its worker got back is the one a read would return), and when it
 * submitted runs. Bounded; the oldest go first.
 */
export class RecentRuns<V> {
  private readonly runs = new BoundedMap<string, V>(RECENT_LIMIT);

  set(runId: string, value: V): void {
    this.runs.set(runId, value);
  }

  get(runId: string): V | undefined {
    return this.runs.get(runId);
  }
}

/** A bounded set of ids, the oldest forgotten first. */
export class RecentIds {
  private readonly ids = new Set<string>();

  constructor(private readonly limit = 4096) {}

  add(id: string): void {
    this.ids.delete(id);
    if (this.ids.size >= this.limit) this.ids.delete(this.ids.values().next().value!);
    this.ids.add(id);
  }

  has(id: string): boolean {
    return this.ids.has(id);
  }
}
