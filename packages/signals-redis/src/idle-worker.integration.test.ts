import { randomBytes } from "node:crypto";
import { Session } from "@openrath/core";
import { createDurableRuntime, defineWorkflow } from "@openrath/runtime-durable";
import type { RunStoreV1, SignalsV1 } from "@openrath/runtime-durable/store";
import { postgresStore } from "@openrath/store-postgres";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { redisSignals } from "./redis-signals.js";
import { POSTGRES_URL, postgresTestService, redisTestService } from "./testing/redis-server.js";

const postgres = await postgresTestService();
const redis = await redisTestService();
afterAll(() => redis.stop());

/**
 * The latest `query_start` among the server backends of `application`, as PostgreSQL itself
 * reports them in `pg_stat_activity` (live, not sampled statistics), and how many there are.
 */
async function lastQueryAt(
  admin: pg.Client,
  application: string,
): Promise<{ backends: number; last: number }> {
  const r = await admin.query<{ n: string; last: Date | null }>(
    "select count(*) as n, max(query_start) as last from pg_stat_activity where application_name = $1",
    [application],
  );
  return { backends: Number(r.rows[0]!.n), last: r.rows[0]!.last ? r.rows[0]!.last.getTime() : 0 };
}

// "Does not poll while idle", observed at the database: every connection of the store (its pool
// and its LISTEN connection) carries one application_name, and PostgreSQL reports when each last
// started a query. A worker with a 30 s lease sweeps every 10 s; in between it sends nothing.
describe.skipIf(!postgres.available)(`an idle worker sends the database nothing (${postgres.reason})`, () => {
  const cases: [string, (store: RunStoreV1) => SignalsV1 | undefined][] = [
    ["LISTEN/NOTIFY", () => undefined],
    ...(redis.available
      ? ([
          [
            "Redis",
            (store: RunStoreV1) =>
              redisSignals({
                url: redis.url!,
                prefix: `idle-${randomBytes(4).toString("hex")}`,
                fallback: store.signals,
              }),
          ],
        ] as [string, (store: RunStoreV1) => SignalsV1][])
      : []),
  ];
  for (const [label, makeSignals] of cases) {
    it(`with ${label}: no query for 2 s while idle, then a submit wakes it at once`, async () => {
      const application = `openrath-idle-${randomBytes(4).toString("hex")}`;
      const schema = `idle_${randomBytes(5).toString("hex")}`;
      const url = new URL(POSTGRES_URL!);
      url.searchParams.set("application_name", application);
      const store = await postgresStore({ connectionString: url.toString(), schema, migrate: true });
      const signals = makeSignals(store);
      const admin = new pg.Client({ connectionString: POSTGRES_URL });
      await admin.connect();
      const runtime = createDurableRuntime({ store, ...(signals ? { signals } : {}) });
      const flow = defineWorkflow(`idle-${application}`).step(
        "only",
        (s) => s.append({ kind: "assistant", content: "awake" }),
        { entry: true },
      );
      await runtime.register(flow);
      // The run loop alone: the periodic jobs (schedules, queued messages, webhooks) query once a
      // tick by design (ADR 0031, costs), so they are off for this measure of the claim loop.
      const worker = runtime.worker({ concurrency: 4, leaseMs: 30_000, jobs: { tickMs: false } });
      try {
        await worker.start();
        await new Promise((r) => setTimeout(r, 300));
        const quietFrom = (await lastQueryAt(admin, application)).last;
        await new Promise((r) => setTimeout(r, 2_000));
        const idle = await lastQueryAt(admin, application);
        expect(idle.backends, "the store's connections are visible").toBeGreaterThanOrEqual(2);
        expect(idle.last, "no query started while the worker was idle").toBe(quietFrom);

        const before = Date.now();
        const run = await runtime.submit(flow.name, Session.fromUserMessage("wake"));
        expect((await runtime.wait(run.id)).status).toBe("succeeded");
        expect(Date.now() - before).toBeLessThan(5_000);
        // The same observation sees the work: the check above could have failed.
        expect((await lastQueryAt(admin, application)).last).toBeGreaterThan(quietFrom);
      } finally {
        await worker.stop({ drain: false });
        await signals?.close();
        await store.close();
        await admin.end();
      }
    }, 30_000);
  }
});
