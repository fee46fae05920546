import type { JournalStoreV1 } from "../contract/journal-store.js";
import type { RunRecord } from "../contract/run-records.js";
import type { Signal, SignalsV1 } from "../contract/signals.js";

const eventOf = (run: RunRecord): Signal => ({ kind: "event", runId: run.id, seq: run.eventSeq });

/**
 * The journal seen through signals the store does not publish itself (Redis): after a write that
 * changes a run's status commits — a park, a decision, a resolution, an expiry — the signals it
 * calls for are published (fire-and-forget, like `publishCommits` does for the run store).
 */
export function publishingJournal(journal: JournalStoreV1, signals: SignalsV1): JournalStoreV1 {
  const publish = (signal: Signal) => {
    signals.publish(signal).catch(() => {});
  };
  const resumed = (run: RunRecord) => {
    if (run.status === "queued") publish({ kind: "work", planHash: run.planHash });
    publish(eventOf(run));
  };
  return {
    ...bind(journal),
    async reviewEffect(fence, effectId) {
      const run = await journal.reviewEffect(fence, effectId);
      publish(eventOf(run));
      return run;
    },
    async raiseInterrupt(fence, input) {
      const result = await journal.raiseInterrupt(fence, input);
      publish(eventOf(result.run));
      return result;
    },
    async resolveEffect(effectId, resolution, tenantId, audited) {
      const result = await journal.resolveEffect(effectId, resolution, tenantId, audited);
      resumed(result.run);
      return result;
    },
    async decideInterrupt(interruptId, decision, tenantId, audited) {
      const result = await journal.decideInterrupt(interruptId, decision, tenantId, audited);
      resumed(result.run);
      return result;
    },
    async expireInterrupts() {
      const result = await journal.expireInterrupts();
      if (result.decided > 0) publish({ kind: "work" });
      return result;
    },
  };
}

/** The journal's members bound to it, so the wrapper can spread them. */
function bind(journal: JournalStoreV1): JournalStoreV1 {
  const out: Record<string, unknown> = { specVersion: journal.specVersion };
  for (const key of [
    "openStep",
    "record",
    "beginEffect",
    "dispatchEffect",
    "completeEffect",
    "reviewEffect",
    "raiseInterrupt",
    "getEffect",
    "listEffects",
    "resolveEffect",
    "getInterrupt",
    "listInterrupts",
    "decideInterrupt",
    "expireInterrupts",
    "stepInterrupts",
  ] as const) {
    out[key] = (journal[key] as (...args: unknown[]) => unknown).bind(journal);
  }
  return out as unknown as JournalStoreV1;
}
