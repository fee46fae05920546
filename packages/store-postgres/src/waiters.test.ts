import { randomBytes } from "node:crypto";
import { PGlite } from "@electric-sql/pglite";
import { Session } from "@openrath/core";
import { createDurableRuntime, type DurableRuntime, defineWorkflow } from "@openrath/runtime-durable";
import pg from "pg";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { pgliteStore, postgresStore, type QueryEvent } from "./postgres-store.js";
import { POSTGRES_URL, postgres } from "./testing/postgres-url.js";

const open: { close(drain?: unknown): Promise<void> }[] = [];
afterEach(async () => {
  for (const s of open.splice(0).reverse()) await s.close();
});
const db = PGlite.create();
afterAll(async () => (await db).close());

const flow = () =>
  defineWorkflow("waited").step("only", (s) => s.append({ kind: "assistant", content: "done" }), {
    entry: true,
  });

/** Whether a statement is a read of one run (what `getRun` sends). */
const readsRun = (e: QueryEvent) => /^select id, tenant_id\b.* where id = \$1$/s.test(e.sql.trim());

async function runtimeOn(store: Awaited<ReturnType<typeof pgliteStore>>): Promise<DurableRuntime> {
  const rt = createDurableRuntime({ store });
  open.push(rt);
  await rt.register(flow());
  return rt;
}

/** `rt.wait`, failing well before the waiter's 10 s safety re-read would have ended it. */
const waitSoon = (rt: DurableRuntime, runId: string) =>
  rt.wait(runId, { signal: AbortSignal.timeout(5_000) });

describe("a waiter on a run submitted in its runtime", () => {
  it("submissions made together share statements; the waiter reads nothing before the run ends when a worker of the same runtime ends it (PGlite)", async () => {
    const sent: QueryEvent[] = [];
    const rt = await runtimeOn(
      await pgliteStore({ db: await db, schema: "waiters_a", onQuery: (e) => sent.push(e) }),
    );
    await rt.worker({ concurrency: 4 }).start();
    sent.length = 0;
    const runs = await Promise.all(
      Array.from({ length: 5 }, (_, i) => rt.submit("waited", Session.fromUserMessage(`task ${i}`))),
    );
    // Submissions made together share insert statements.
    const inserts = sent.filter((e) => e.sql.trimStart().startsWith("with plan_0 as"));
    expect(inserts.length).toBeGreaterThan(0);
    expect(inserts.length).toBeLessThan(5);
    sent.length = 0;
    const ended = await Promise.all(runs.map((run) => waitSoon(rt, run.id)));
    expect(ended.map((r) => r.status)).toEqual(runs.map(() => "succeeded"));
    expect(sent.filter(readsRun)).toEqual([]);
    // What it returned is what the store holds.
    for (const run of ended) expect(await rt.get(run.id)).toEqual(run);
  });

  it("learns of an end written by another runtime on the same database (PGlite)", async () => {
    const api = await runtimeOn(await pgliteStore({ db: await db, schema: "waiters_b" }));
    const other = await runtimeOn(await pgliteStore({ db: await db, schema: "waiters_b" }));
    const run = await api.submit("waited", Session.fromUserMessage("elsewhere"));
    await other.worker().start();
    expect((await waitSoon(api, run.id)).status).toBe("succeeded");
    // Ended before the wait began: heard, so read.
    const second = await api.submit("waited", Session.fromUserMessage("before the wait"));
    await other.wait(second.id);
    expect((await waitSoon(api, second.id)).status).toBe("succeeded");
  });
});

describe("two stores over one PGlite database", () => {
  it("hear each other's signals: a submission in one wakes the other's worker, its end wakes the first's waiter", async () => {
    const pglite = await PGlite.create();
    const api = await runtimeOn(await pgliteStore({ db: pglite, schema: "shared_db" }));
    const working = await runtimeOn(await pgliteStore({ db: pglite, schema: "shared_db" }));
    const worker = working.worker({ concurrency: 2 });
    await worker.start();
    // Let the worker's first claim (an empty queue) come back: from here it sleeps until a signal.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    const runs = await Promise.all(
      [0, 1, 2].map((i) => api.submit("waited", Session.fromUserMessage(`shared ${i}`))),
    );
    const ended = await Promise.all(runs.map((r) => waitSoon(api, r.id)));
    expect(ended.map((r) => r.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
    // Woken by the signals, not by the worker's heartbeat sweep (10 s at the default lease) or the waiter's re-read.
    expect(Date.now() - started).toBeLessThan(3_000);
    await worker.stop();
    await pglite.close();
  });
});

describe.skipIf(!postgres.available)(`a waiter on a PostgreSQL server (${postgres.reason})`, () => {
  const serverRuntime = async (schema: string, app: string) => {
    const url = new URL(POSTGRES_URL!);
    url.searchParams.set("application_name", app);
    return runtimeOn(await postgresStore({ connectionString: url.toString(), schema, migrate: true }));
  };

  it("learns of an end written in another process, and of one its listener missed while reconnecting", async () => {
    const schema = `waiters_${randomBytes(4).toString("hex")}`;
    const app = `waiter_${randomBytes(4).toString("hex")}`;
    const api = await serverRuntime(schema, app);
    const other = await serverRuntime(schema, `${app}_worker`);
    const first = other.worker();
    await first.start();
    const earlier = await api.submit("waited", Session.fromUserMessage("elsewhere"));
    expect((await waitSoon(api, earlier.id)).status).toBe("succeeded");
    await first.stop();

    // The waiter's connections are cut right after the next submission, and the run ends in the
    // other process while the waiter's listener is away; the wait starts once the listener is back.
    const run = await api.submit("waited", Session.fromUserMessage("while away"));
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    try {
      await admin.query(
        "select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1",
        [app],
      );
      await other.worker().start();
      await other.wait(run.id);
      for (let i = 0; i < 50; i++) {
        const back = await admin.query(
          "select 1 from pg_stat_activity where application_name = $1 and query ilike 'listen%'",
          [app],
        );
        if (back.rowCount) break;
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      await admin.end();
    }
    expect((await waitSoon(api, run.id)).status).toBe("succeeded");
  });
});
