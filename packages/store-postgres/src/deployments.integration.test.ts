import { PGlite } from "@electric-sql/pglite";
import { Session } from "@openrath/core";
import { createDurableRuntime, type DurableRuntime, defineWorkflow } from "@openrath/runtime-durable";
import type { RunStoreV1 } from "@openrath/runtime-durable/store";
import { Kysely, sql } from "kysely";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { PGliteDialect } from "./driver/pglite-dialect.js";
import { MIGRATIONS } from "./migrations/index.js";
import { migrate } from "./migrator.js";
import { pgliteStore, postgresStore } from "./postgres-store.js";
import { POSTGRES_URL, postgres } from "./testing/postgres-url.js";

const embedded = PGlite.create();
afterAll(async () => (await embedded).close());
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn().catch(() => {});
});

let n = 0;
/** Opens handles on one fresh schema: each call a new store, as another process would have. */
function database(kind: string): () => Promise<RunStoreV1> {
  const schema = `deploy_${process.pid}_${++n}`;
  return async () => {
    const store =
      kind === "PGlite"
        ? await pgliteStore({ db: await embedded, schema })
        : await postgresStore({ connectionString: POSTGRES_URL!, schema, migrate: true });
    cleanup.push(() => store.close());
    return store;
  };
}

/** Revision `version` of the support workflow (the same code; the version alone makes the hash differ). */
const support = (version: string, answer = `answered by v${version}`) =>
  defineWorkflow("support", { version }).step(
    "answer",
    async (session, ctx) => {
      await new Promise((r) => setTimeout(r, Number(ctx.metadata.holdMs ?? 0)));
      return session.append({ kind: "assistant", content: answer, author: `v${version}` });
    },
    { entry: true },
  );

async function workerFor(store: RunStoreV1, version: string): Promise<DurableRuntime> {
  const runtime = createDurableRuntime({ store });
  await runtime.register(support(version));
  await runtime.worker({ leaseMs: 5_000 }).start();
  cleanup.push(() => runtime.close({ drain: false }));
  return runtime;
}

describe.each(["PGlite", ...(postgres.available ? ["PostgreSQL"] : [])])(
  "workflow names resolve through the store on %s",
  (kind) => {
    it("a producer that only submits starts a run by name without the workflow's code", async () => {
      const open = database(kind);
      await workerFor(await open(), "1");
      const producer = createDurableRuntime({ store: await open() });
      expect(producer.plans).toEqual([]);
      const run = await producer.submit("support", Session.fromUserMessage("where is my order?"));
      expect((await producer.result(run.id)).text()).toBe("answered by v1");
      await expect(
        producer.submit("nobody-deployed-this", Session.fromUserMessage("x")),
      ).rejects.toMatchObject({
        code: "unknown_plan",
      });
    });

    it("a deploy points the name at a new revision while runs of the old one finish on their workers", async () => {
      const open = database(kind);
      await workerFor(await open(), "1");
      const producer = createDurableRuntime({ store: await open() });
      const old = await producer.submit("support", Session.fromUserMessage("slow one"), {
        metadata: { holdMs: 600 },
      });
      const v2 = await workerFor(await open(), "2");
      expect((await v2.revisions("support")).map((r) => [r.version, r.deployed])).toEqual([
        ["2", true],
        ["1", false],
      ]);
      // The producer resolved the name a moment ago: it sees the deploy within a second.
      await new Promise((r) => setTimeout(r, 1100));
      const fresh = await producer.submit("support", Session.fromUserMessage("new one"));
      expect((await producer.result(fresh.id)).text()).toBe("answered by v2");
      expect((await producer.result(old.id)).text()).toBe("answered by v1");

      // An older release restarting registers its revision again: the name stays on the newer one.
      const restarted = createDurableRuntime({ store: await open() });
      await restarted.register(support("1"));
      expect((await restarted.revisions("support")).find((r) => r.deployed)?.version).toBe("2");
      // A rollback is explicit.
      const back = await restarted.deploy("support", "1");
      expect(back).toMatchObject({ name: "support", version: "1", previous: v2.plans[0]!.hash });
      const rolled = await restarted.submit("support", Session.fromUserMessage("after rollback"));
      expect(rolled.planHash).toBe(back.hash);
      await expect(restarted.deploy("support", "9")).rejects.toMatchObject({ code: "unknown_plan" });
    });

    it("registering changed code under a version already registered is plan_conflict naming the version", async () => {
      const runtime = createDurableRuntime({ store: await database(kind)() });
      await runtime.register(support("1"));
      // The step's code changed (so the plan hash did), its version did not.
      const changed = defineWorkflow("support", { version: "1" }).step(
        "answer",
        (session) => session.append({ kind: "assistant", content: "a changed step", author: "v1" }),
        { entry: true },
      );
      const error = await runtime.register(changed).catch((e) => e);
      expect(error).toMatchObject({ code: "plan_conflict", details: { name: "support", version: "1" } });
      expect((error as Error).message).toContain("new version");
      expect((await runtime.revisions("support")).map((r) => r.version)).toEqual(["1"]);
    });
  },
);

describe("migration 6 (deployments) over plans written before it", () => {
  it("keeps the newest plan of a duplicated (name, version) and deploys each name at its newest plan", async () => {
    const db = new Kysely<unknown>({ dialect: new PGliteDialect(await embedded) });
    const schema = `deploy_mig_${process.pid}`;
    await migrate(db, schema, MIGRATIONS.slice(0, 5));
    const plan = (hash: string, name: string, version: string, at: string) =>
      sql`insert into ${sql.table(`${schema}.plans`)} (hash, name, version, definition, created_at)
        values (${hash}, ${name}, ${version}, '{}', ${at}::timestamptz)`.execute(db);
    await plan("a".repeat(64), "support", "1", "2026-01-01T00:00:00Z");
    await plan("b".repeat(64), "support", "1", "2026-02-01T00:00:00Z");
    await plan("c".repeat(64), "billing", "3", "2026-01-15T00:00:00Z");
    expect(await migrate(db, schema, MIGRATIONS.slice(0, 6))).toEqual([6]);
    const store = await pgliteStore({ db: await embedded, schema });
    cleanup.push(() => store.close());
    expect(await store.deployments!.current("support")).toMatchObject({ hash: "b".repeat(64), version: "1" });
    expect(await store.deployments!.current("billing")).toMatchObject({ hash: "c".repeat(64) });
    // The older duplicate stays executable by hash; its version belongs to the newer plan.
    expect(await store.getPlan("a".repeat(64))).toMatchObject({ name: "support", version: "1" });
    await expect(
      store.registerPlan({ hash: "a".repeat(64), name: "support", version: "1", definition: {} }),
    ).rejects.toMatchObject({ code: "plan_conflict" });
    await db.destroy();
  });
});
