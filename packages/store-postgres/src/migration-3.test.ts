import { PGlite } from "@electric-sql/pglite";
import { Session } from "@openrath/core";
import { baseOf, encodeCheckpoint, restoreSession } from "@openrath/runtime-durable/store";
import { Kysely, sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { PGliteDialect } from "./driver/pglite-dialect.js";
import { MIGRATIONS } from "./migrations/index.js";
import { checkSchema, migrate } from "./migrator.js";
import { pgliteStore } from "./postgres-store.js";

const db = await PGlite.create();
afterAll(() => db.close());

/** Writes a run and two checkpoints the way the first format did: one `chunks` row per chunk. */
async function firstFormatRun(k: Kysely<unknown>, schema: string, first: Session, second: Session) {
  const t = (name: string) => sql.table(`${schema}.${name}`);
  const runId = "01a20000-0000-7000-8000-000000000001";
  await sql`insert into ${t("plans")} (hash, name, version, definition) values ('p', 'flow', '1', '{}')`.execute(
    k,
  );
  await sql`insert into ${t("runs")} (id, tenant_id, session_id, plan_hash, workflow, status, fingerprint, next_step,
    checkpoint_seq, checkpoint_id, event_seq, ended_at)
    values (${runId}, 't', ${first.id}, 'p', 'flow', 'succeeded', '', null, 1, 2, 3, now())`.execute(k);
  for (const chunk of second.chunks) {
    const { id, ...body } = chunk as { id: string };
    await sql`insert into ${t("chunks")} (tenant_id, id, body) values ('t', ${id}, ${JSON.stringify(body)})`.execute(
      k,
    );
  }
  const row = (
    id: number,
    seq: number,
    session: Session,
    base: number | null,
    ops: unknown[],
    next: string | null,
  ) =>
    sql`insert into ${t("checkpoints")} (id, run_id, tenant_id, seq, session_id, base_id, depth, chunk_ops, lineage, placement, next_step)
      values (${id}, ${runId}, 't', ${seq}, ${session.id}, ${base}, ${base === null ? 0 : 1}, ${JSON.stringify(ops)},
        ${JSON.stringify(session.toJSON().lineage)}, null, ${next})`.execute(k);
  await row(
    1,
    0,
    first,
    null,
    first.chunks.map((c) => c.id),
    "reply",
  );
  await row(
    2,
    1,
    second,
    1,
    [[0, first.length], ...second.chunks.slice(first.length).map((c) => c.id)],
    null,
  );
  await sql`select setval(${`${schema}.checkpoint_ids`}, 2)`.execute(k);
  await sql`insert into ${t("run_events")} (run_id, seq, type, data) values
    (${runId}, 1, 'run.created', '{}'), (${runId}, 2, 'run.checkpoint', '{"sequence":1}'), (${runId}, 3, 'run.state.changed', '{}')`.execute(
    k,
  );
  return runId;
}

describe("migration 3 (compact checkpoints)", () => {
  it("keeps first-format checkpoints readable: equal sessions, the session's head, events, and later packed runs on top", async () => {
    const schema = "before_compact";
    const k = new Kysely<unknown>({ dialect: new PGliteDialect(db) });
    await migrate(k, schema, MIGRATIONS.slice(0, 2));
    const first = Session.fromUserMessage("what did we decide?");
    const second = first.append({ kind: "assistant", content: "to migrate", author: "bot" });
    const runId = await firstFormatRun(k, schema, first, second);

    expect(await migrate(k, schema)).toEqual(MIGRATIONS.slice(2).map((m) => m.version));
    expect((await checkSchema(k, schema)).ready).toBe(true);
    const store = await pgliteStore({ db, schema });
    try {
      const back = await store.loadCheckpoint(runId);
      expect(JSON.stringify(restoreSession(back!).toJSON())).toBe(JSON.stringify(second.toJSON()));
      expect(JSON.stringify(restoreSession((await store.loadCheckpoint(runId, 0))!).toJSON())).toBe(
        JSON.stringify(first.toJSON()),
      );
      const head = await store.findSessionHead("t", [second.id]);
      expect(await store.findSessionHead("t", ["a-session-never-seen"])).toBeUndefined();
      expect(head).toMatchObject({ runId, sequence: 1, depth: 1 });
      expect((await store.readEvents(runId)).map((e) => e.type)).toEqual([
        "run.created",
        "run.checkpoint",
        "run.state.changed",
      ]);

      // A fork's run encoded against the migrated head packs only its new chunk.
      const followUp = second.fork().append({ kind: "user", content: "and next?" });
      const encoded = encodeCheckpoint(followUp, baseOf(head!), {
        sequence: 0,
        stepId: null,
        nextStep: "reply",
      });
      expect(encoded.write.newChunks).toHaveLength(1);
      const { run } = await store.submit({
        tenantId: "t",
        planHash: "p",
        checkpoint: encoded.write,
        fingerprint: "",
      });
      expect(JSON.stringify(restoreSession((await store.loadCheckpoint(run.id))!).toJSON())).toBe(
        JSON.stringify(followUp.toJSON()),
      );
      // Erasing the old session keeps the new run whole and removes the first format's chunk rows.
      await store.cancel(run.id);
      const erased = await store.eraseSession("t", first.id);
      expect(erased).toMatchObject({ runsDeleted: 1, checkpointsDeleted: 2, chunksDeleted: second.length });
      expect(JSON.stringify(restoreSession((await store.loadCheckpoint(run.id))!).toJSON())).toBe(
        JSON.stringify(followUp.toJSON()),
      );
    } finally {
      await store.close();
    }
  });
});
