import { PGlite } from "@electric-sql/pglite";
import { Session } from "@openrath/core";
import { createDurableRuntime, defineWorkflow } from "@openrath/runtime-durable";
import { restoreSession } from "@openrath/runtime-durable/store";
import { Kysely, sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { PGliteDialect } from "./driver/pglite-dialect.js";
import { MIGRATIONS } from "./migrations/index.js";
import { checkSchema, migrate } from "./migrator.js";
import { pgliteStore } from "./postgres-store.js";

const db = await PGlite.create();
afterAll(() => db.close());

/** The tables a run's history lives in, in an order their foreign keys accept. */
const TABLES = ["plans", "runs", "checkpoints", "session_heads", "run_events", "checkpoint_artifacts"];

/** Everything a reader can see of a schema's runs: every checkpoint restored, events, heads. */
async function observe(schema: string, runIds: readonly string[], sessionIds: readonly string[]) {
  const store = await pgliteStore({ db, schema });
  try {
    const out: unknown[] = [];
    for (const runId of runIds) {
      const last = (await store.loadCheckpoint(runId))!;
      for (let seq = 0; seq <= last.sequence; seq++) {
        const cp = (await store.loadCheckpoint(runId, seq))!;
        out.push([runId, seq, cp.id, cp.createdAt, cp.nextStep, JSON.stringify(restoreSession(cp).toJSON())]);
      }
      out.push((await store.readEvents(runId)).map((e) => [e.seq, e.type, e.data, e.at]));
      // A follower that read part of the events gets the rest.
      out.push((await store.readEvents(runId, { after: 5 })).map((e) => e.seq));
    }
    for (const sessionId of sessionIds) out.push((await store.findSessionHead("t", [sessionId]))?.id);
    return out;
  } finally {
    await store.close();
  }
}

describe("migration 4 (narrow checkpoints)", () => {
  it("rows written under migration 3 read back equal after it: checkpoints of every sequence, events, heads; runs continue and erase on top", async () => {
    // The history is written by the runtime in one schema, then copied row by row into a schema
    // at migration 3 (the columns the store writes are the same under both) and migrated.
    const source = "narrow_source";
    const k = new Kysely<unknown>({ dialect: new PGliteDialect(db) });
    const writer = await pgliteStore({ db, schema: source });
    const runtime = createDurableRuntime({ store: writer, tenantId: "t" });
    const long = defineWorkflow("long");
    // 40 steps: the checkpoints of one run span two groups of the (run_id, seq >> 5) index.
    for (let i = 0; i < 40; i++)
      long.step(`s${i}`, (s) => s.append({ kind: "assistant", content: `step ${i}` }), {
        entry: i === 0,
        ...(i + 1 < 40 ? { next: `s${i + 1}` } : {}),
      });
    const reply = defineWorkflow("reply").step(
      "reply",
      (s) => s.append({ kind: "assistant", content: "again" }),
      { entry: true },
    );
    await runtime.register(long);
    await runtime.register(reply);
    const worker = runtime.worker({ concurrency: 1, leaseMs: 30_000 });
    await worker.start();
    const start = Session.fromUserMessage("a long one");
    const first = await runtime.submit("long", start);
    const afterLong = await runtime.result(first.id);
    // A run continuing the session (checkpoint 0 against its head) and a fork of it.
    const second = await runtime.submit("reply", afterLong.append({ kind: "user", content: "more" }));
    const afterSecond = await runtime.result(second.id);
    const fork = afterLong.fork().append({ kind: "user", content: "elsewhere" });
    const third = await runtime.submit("reply", fork);
    await runtime.result(third.id);
    await worker.stop();
    await writer.close();
    const runIds = [first.id, second.id, third.id];
    const sessionIds = [start.id, fork.id];
    const expected = await observe(source, runIds, sessionIds);

    const target = "narrow_target";
    await migrate(k, target, MIGRATIONS.slice(0, 3));
    for (const table of TABLES) {
      const columns = await sql<{ column_name: string }>`select column_name from information_schema.columns
        where table_schema = ${target} and table_name = ${table}`.execute(k);
      const list = sql.raw(columns.rows.map((c) => c.column_name).join(", "));
      await sql`insert into ${sql.table(`${target}.${table}`)} (${list}) select ${list} from ${sql.table(`${source}.${table}`)}`.execute(
        k,
      );
    }
    const [{ last }] = (
      await sql<{
        last: string;
      }>`select max(id)::text as last from ${sql.table(`${target}.checkpoints`)}`.execute(k)
    ).rows as [{ last: string }];
    await sql`select setval(${`${target}.checkpoint_ids`}, ${last}::bigint)`.execute(k);
    // A claim-check reference beside a checkpoint keeps its foreign key through the copy.
    await sql`insert into ${sql.table(`${target}.checkpoint_artifacts`)} (checkpoint_id, tenant_id, digest)
      values (${last}::bigint, 't', 'sha256-x')`.execute(k);

    expect(await migrate(k, target)).toEqual(MIGRATIONS.slice(3).map((m) => m.version));
    expect((await checkSchema(k, target)).ready).toBe(true);
    // A release that knows migrations 1–3 cannot read the bodies this one writes: it refuses the schema.
    expect(await checkSchema(k, target, MIGRATIONS.slice(0, 3))).toMatchObject({
      ready: false,
      problems: [
        expect.stringMatching(/migration 4 \(narrow_checkpoints\) is newer than this code and not additive/),
      ],
    });
    expect(await observe(target, runIds, sessionIds)).toEqual(expected);
    const indexes = await sql<{ indexname: string }>`select indexname from pg_indexes
      where schemaname = ${target} and tablename = 'checkpoints' order by 1`.execute(k);
    expect(indexes.rows.map((r) => r.indexname)).toEqual(["checkpoints_pkey", "checkpoints_run_group"]);

    const store = await pgliteStore({ db, schema: target });
    try {
      const rt = createDurableRuntime({ store, tenantId: "t" });
      await rt.register(long);
      await rt.register(reply);
      const w = rt.worker({ concurrency: 1, leaseMs: 30_000 });
      await w.start();
      // A new run continues the migrated head; its rows are the new layout's.
      const next = afterSecond.append({ kind: "user", content: "after the migration" });
      const fourth = await rt.submit("reply", next);
      const afterFourth = await rt.result(fourth.id);
      await w.stop();
      expect(afterFourth.length).toBe(next.length + 1);
      expect(JSON.stringify(restoreSession((await store.loadCheckpoint(fourth.id, 0))!).toJSON())).toBe(
        JSON.stringify(next.toJSON()),
      );
      expect((await store.findSessionHead("t", [start.id]))?.runId).toBe(fourth.id);
      // A checkpoint deleted removes its artifact reference (the foreign key cascades).
      const erased = await store.eraseSession("t", fork.id);
      expect(erased.runsDeleted).toBe(1);
      const refs = await sql<{
        n: number;
      }>`select count(*)::int as n from ${sql.table(`${target}.checkpoint_artifacts`)}`.execute(k);
      expect(refs.rows[0]!.n).toBe(0);
      // The session's other runs are whole.
      expect(JSON.stringify(restoreSession((await store.loadCheckpoint(fourth.id))!).toJSON())).toBe(
        JSON.stringify(afterFourth.toJSON()),
      );
      const at33 = expected.find(
        (row) => Array.isArray(row) && row[0] === first.id && row[1] === 33,
      ) as unknown[];
      expect(JSON.stringify(restoreSession((await store.loadCheckpoint(first.id, 33))!).toJSON())).toBe(
        at33[5],
      );
      expect(await store.loadCheckpoint(first.id, 41)).toBeUndefined();
    } finally {
      await store.close();
    }
  });
});
