import type { RunStatus, StoreStatistics, StoreStatsV1 } from "@openrath/runtime-durable/store";
import { sql } from "kysely";
import { type StoreContext, tables, toMs } from "./context.js";

/**
 * The store's {@link StoreStatsV1}: two statements, one grouping the runs by workflow and status
 * (with the due queue as filtered aggregates of the same scan), one counting effects under review
 * and open interrupts with the database's clock.
 */
export function statsStore(c: StoreContext, run: <T>(work: () => Promise<T>) => Promise<T>): StoreStatsV1 {
  return {
    specVersion: "v1",
    read: () =>
      run(async () => {
        const db = tables(c);
        const [groups, totals] = await Promise.all([
          db
            .selectFrom("runs")
            .select((eb) => {
              const due = eb.and([eb("status", "=", "queued"), eb("not_before", "<=", sql<Date>`now()`)]);
              return [
                "workflow",
                "status",
                eb.fn.countAll<string>().as("count"),
                eb.fn.countAll<string>().filterWhere(due).as("due"),
                eb.fn.min("not_before").filterWhere(due).as("oldest_due"),
              ];
            })
            .groupBy(["workflow", "status"])
            .execute(),
          db
            .selectNoFrom((eb) => [
              sql<Date>`now()`.as("now"),
              eb
                .selectFrom("effects")
                .select(eb.fn.countAll<string>().as("n"))
                .where("status", "=", "needs_review")
                .as("effects"),
              eb
                .selectFrom("interrupts")
                .select(eb.fn.countAll<string>().as("n"))
                .where("status", "=", "pending")
                .as("interrupts"),
            ])
            .executeTakeFirstOrThrow(),
        ]);
        const queue = new Map<string, { due: number; oldestDueAt: number | null }>();
        for (const g of groups) {
          if (g.status !== "queued") continue;
          queue.set(g.workflow, { due: Number(g.due), oldestDueAt: toMs(g.oldest_due) });
        }
        const stats: StoreStatistics = {
          at: toMs(totals.now) ?? Date.now(),
          runs: groups.map((g) => ({
            workflow: g.workflow,
            status: g.status as RunStatus,
            count: Number(g.count),
          })),
          queue: [...queue].map(([workflow, q]) => ({ workflow, ...q })),
          effectsUnderReview: Number(totals.effects ?? 0),
          openInterrupts: Number(totals.interrupts ?? 0),
        };
        return stats;
      }),
  };
}
