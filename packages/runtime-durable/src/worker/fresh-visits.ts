import type { JournalStoreV1 } from "../contract/journal-store.js";
import type { Fence } from "../contract/run-records.js";

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
