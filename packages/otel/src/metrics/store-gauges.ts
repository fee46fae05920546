import { RUN_STATUSES, type RunStoreV1 } from "@openrath/runtime-durable";
import type { BatchObservableResult, Meter, Observable } from "@opentelemetry/api";
import { ATTR, METRIC } from "./names.js";

/**
 * Registers the store's counts as observable gauges on `meter`, read through `store.stats` once
 * per collection (one batch callback for every gauge). A store without the `stats` capability
 * registers nothing. Returns the function that removes the callback.
 */
export function observeStoreCounts(meter: Meter, store: RunStoreV1): () => void {
  const stats = store.capabilities.stats === true ? store.stats : undefined;
  if (stats === undefined) return () => {};
  const runs = meter.createObservableGauge(METRIC.runs, { description: "Runs in the store.", unit: "{run}" });
  const depth = meter.createObservableGauge(METRIC.queueDepth, {
    description: "Queued runs that are due.",
    unit: "{run}",
  });
  const age = meter.createObservableGauge(METRIC.queueOldestAge, {
    description: "Age of the oldest due queued run (0 with none).",
    unit: "s",
  });
  const effects = meter.createObservableGauge(METRIC.effectsUnderReview, {
    description: "Effects parked for an operator's review.",
    unit: "{effect}",
  });
  const interrupts = meter.createObservableGauge(METRIC.interruptsOpen, {
    description: "Interrupts waiting for a decision.",
    unit: "{interrupt}",
  });
  const observables: Observable[] = [runs, depth, age, effects, interrupts];
  const callback = async (result: BatchObservableResult) => {
    let read: Awaited<ReturnType<typeof stats.read>>;
    try {
      read = await stats.read();
    } catch {
      // The store is away: this collection has no store counts (the series go stale, not zero).
      return;
    }
    // Every status of every workflow seen is reported, 0 included, so a series ends at 0 rather
    // than disappearing when its last run moves on.
    const workflows = new Set(read.runs.map((r) => r.workflow));
    const counts = new Map(read.runs.map((r) => [`${r.workflow}\n${r.status}`, r.count]));
    for (const workflow of workflows) {
      for (const status of RUN_STATUSES)
        result.observe(runs, counts.get(`${workflow}\n${status}`) ?? 0, {
          [ATTR.workflow]: workflow,
          [ATTR.status]: status,
        });
      const queue = read.queue.find((q) => q.workflow === workflow);
      result.observe(depth, queue?.due ?? 0, { [ATTR.workflow]: workflow });
      const oldest = queue?.oldestDueAt ?? null;
      result.observe(age, oldest === null ? 0 : Math.max(0, (read.at - oldest) / 1000), {
        [ATTR.workflow]: workflow,
      });
    }
    result.observe(effects, read.effectsUnderReview);
    result.observe(interrupts, read.openInterrupts);
  };
  meter.addBatchObservableCallback(callback, observables);
  return () => meter.removeBatchObservableCallback(callback, observables);
}
