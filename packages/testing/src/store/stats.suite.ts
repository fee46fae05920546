import type { RunStoreV1, StoreStatsV1 } from "@openrath/runtime-durable/store";
import { expect } from "vitest";
import { describeGroup } from "../internal/describe-group.js";
import { claimOne, registeredPlan, submit } from "./fixtures.js";
import type { StoreSuiteContext } from "./suite-context.js";

function statsOf(store: RunStoreV1): StoreStatsV1 {
  expect(store.capabilities.stats, "capabilities.stats").toBe(true);
  const stats = store.stats;
  if (!stats) throw new Error("the store claims capabilities.stats but has no `stats` member");
  expect(stats.specVersion).toBe("v1");
  return stats;
}

/** Store-wide counts for monitoring (`capabilities.stats`). */
export function statsSuite(context: StoreSuiteContext): void {
  describeGroup<RunStoreV1>(context, "stats", "store", (group) => {
    group.test(
      "counts runs by workflow and status, the due queue with its oldest run (a future retry is not due), across tenants",
      async () => {
        const store = group.track(await context.create());
        const stats = statsOf(store);
        const empty = await stats.read();
        expect(empty.runs).toEqual([]);
        expect(empty.queue).toEqual([]);
        expect(empty.effectsUnderReview).toBe(0);
        expect(empty.openInterrupts).toBe(0);
        expect(Math.abs(empty.at - (await store.now()))).toBeLessThan(5_000);

        const a = await registeredPlan(store);
        const b = await registeredPlan(store);
        const first = await submit(store, a, { tenantId: "tenant-a" });
        await submit(store, a, { tenantId: "tenant-b" });
        await submit(store, a, { tenantId: "tenant-a" });
        await submit(store, a, { notBefore: (await store.now()) + 3_600_000 });
        const cancelled = await submit(store, b);
        await store.cancel(cancelled.run.id);
        await claimOne(store, a);

        const read = await stats.read();
        const runs = Object.fromEntries(read.runs.map((r) => [`${r.workflow}/${r.status}`, r.count]));
        expect(runs).toEqual({
          [`${a.name}/queued`]: 3,
          [`${a.name}/running`]: 1,
          [`${b.name}/cancelled`]: 1,
        });
        expect(read.queue).toHaveLength(1);
        const queue = read.queue[0]!;
        expect(queue.workflow).toBe(a.name);
        // The future retry is queued but not due; the first run was claimed.
        expect(queue.due).toBe(2);
        expect(queue.oldestDueAt).not.toBeNull();
        expect(queue.oldestDueAt!).toBeGreaterThanOrEqual(first.run.notBefore);
        expect(queue.oldestDueAt!).toBeLessThanOrEqual(read.at);
      },
    );
  });
}
