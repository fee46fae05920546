import { PGlite } from "@electric-sql/pglite";
import { Kysely, sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { PGliteDialect } from "./driver/pglite-dialect.js";
import { MIGRATIONS } from "./migrations/index.js";
import { checkSchema, migrate } from "./migrator.js";

const lite = PGlite.create();
afterAll(async () => (await lite).close());

describe("migration 8 (schedules, webhooks and their outbox)", () => {
  it("is additive: code of migration 7 stays ready beside it, and its run updates go on, writing deliveries only for webhooks", async () => {
    const db = new Kysely<unknown>({ dialect: new PGliteDialect(await lite) });
    const schema = "mig8_before";
    try {
      await migrate(db, schema, MIGRATIONS.slice(0, 7));
      await sql
        .raw(
          `insert into ${schema}.plans (hash, name, version, definition) values ('p', 'p', '1', '{}');
           insert into ${schema}.runs (id, tenant_id, session_id, plan_hash, workflow, status, fingerprint)
           select gen_random_uuid(), 't' || (g % 2), 's' || g, 'p', 'p', 'running', 'f' from generate_series(1, 4) g`,
        )
        .execute(db);
      expect(await migrate(db, schema, MIGRATIONS.slice(0, 8))).toEqual([8]);
      expect(await checkSchema(db, schema, MIGRATIONS.slice(0, 7))).toMatchObject({
        ready: true,
        newer: [{ version: 8, name: "schedules_and_webhooks", additive: true }],
      });
      await sql
        .raw(
          `insert into ${schema}.webhooks (id, tenant_id, url, secret, events)
           values (gen_random_uuid(), 't1', 'http://127.0.0.1:9/hook', 'a-secret-of-16-chars', '{run.ended}')`,
        )
        .execute(db);
      // An update as migration 7's code writes it: every run ends; only tenant t1's are delivered.
      await sql.raw(`update ${schema}.runs set status = 'succeeded'`).execute(db);
      const rows = await sql<{ tenant_id: string; event: string; status: string }>`
        select d.tenant_id, d.event, d.payload->>'status' as status from ${sql.table(`${schema}.webhook_deliveries`)} d`.execute(
        db,
      );
      expect(rows.rows).toEqual([
        { tenant_id: "t1", event: "run.ended", status: "succeeded" },
        { tenant_id: "t1", event: "run.ended", status: "succeeded" },
      ]);
    } finally {
      await db.destroy();
    }
  });
});
