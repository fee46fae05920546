import { PGlite } from "@electric-sql/pglite";
import { Kysely, sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { PGliteDialect } from "./driver/pglite-dialect.js";
import { MIGRATIONS } from "./migrations/index.js";
import { checkSchema, migrate } from "./migrator.js";

const lite = PGlite.create();
afterAll(async () => (await lite).close());

describe("migration 10 (trace context)", () => {
  it("is additive: code of migration 9 stays ready beside it, and its rows get no trace context or ids", async () => {
    const db = new Kysely<unknown>({ dialect: new PGliteDialect(await lite) });
    const schema = "mig10_before";
    try {
      await migrate(db, schema, MIGRATIONS.slice(0, 9));
      await sql
        .raw(
          `insert into ${schema}.plans (hash, name, version, definition) values ('p', 'p', '1', '{}');
           insert into ${schema}.runs (id, tenant_id, session_id, plan_hash, workflow, status, fingerprint)
           values ('00000000-0000-7000-8000-000000000001', 't', 's', 'p', 'p', 'running', 'f');
           insert into ${schema}.journal (run_id, checkpoint_seq, position, kind, fingerprint, label, result, fencing_token)
           values ('00000000-0000-7000-8000-000000000001', 0, 'm/x/0', 'model', 'f', 'l', '{}', 1)`,
        )
        .execute(db);
      expect(await migrate(db, schema, MIGRATIONS.slice(0, 10))).toEqual([10]);
      expect(await checkSchema(db, schema, MIGRATIONS.slice(0, 9))).toMatchObject({
        ready: true,
        newer: [{ version: 10, name: "trace_context", additive: true }],
      });
      const runs = await sql.raw(`select trace_context from ${schema}.runs`).execute(db);
      expect(runs.rows).toEqual([{ trace_context: null }]);
      const journal = await sql.raw(`select trace_id, span_id from ${schema}.journal`).execute(db);
      expect(journal.rows).toEqual([{ trace_id: null, span_id: null }]);
    } finally {
      await db.destroy();
    }
  });
});
