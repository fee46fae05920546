import { PGlite } from "@electric-sql/pglite";
import { Kysely, sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { PGliteDialect } from "./driver/pglite-dialect.js";
import { MIGRATIONS } from "./migrations/index.js";
import { checkSchema, migrate } from "./migrator.js";
import { pgliteStore } from "./postgres-store.js";

const lite = PGlite.create();
afterAll(async () => (await lite).close());

/** Inserts `n` runs of tenant `t` (every tenth with one of ten projects once `projects`), plan `p`. */
async function insertRuns(db: Kysely<unknown>, schema: string, n: number, projects: boolean) {
  await sql
    .raw(
      `insert into ${schema}.plans (hash, name, version, definition) values ('p', 'p', '1', '{}') on conflict do nothing`,
    )
    .execute(db);
  await sql
    .raw(
      `insert into ${schema}.runs (id, tenant_id, session_id, plan_hash, workflow, status, fingerprint${projects ? ", project_id" : ""})
       select gen_random_uuid(), 't', 's' || g, 'p', 'p', 'succeeded', 'f'${projects ? ", case when g % 10 = 0 then 'p-' || (g / 10) % 10 end" : ""}
       from generate_series(1, ${n}) g`,
    )
    .execute(db);
}

describe("migration 7 (runs' projects, tokens, audit)", () => {
  it("runs written before it have no project; code of migration 6 stays ready beside it (additive)", async () => {
    const db = new Kysely<unknown>({ dialect: new PGliteDialect(await lite) });
    const schema = "mig7_before";
    await migrate(db, schema, MIGRATIONS.slice(0, 6));
    await insertRuns(db, schema, 3, false);
    expect(await migrate(db, schema, MIGRATIONS.slice(0, 7))).toEqual([7]);
    expect(await checkSchema(db, schema, MIGRATIONS.slice(0, 6))).toMatchObject({
      ready: true,
      newer: [{ version: 7, name: "access", additive: true }],
    });
    const store = await pgliteStore({ db: await lite, schema });
    try {
      const runs = await store.listRuns({ tenantId: "t" });
      expect(runs.map((r) => r.projectId)).toEqual([null, null, null]);
      expect(await store.listRuns({ tenantId: "t", projectId: "p-1" })).toEqual([]);
    } finally {
      await store.close();
      await db.destroy();
    }
  });

  it("listRuns of a tenant's project is served by the partial index runs_project", async () => {
    const db = new Kysely<unknown>({ dialect: new PGliteDialect(await lite) });
    const schema = "mig7_plan";
    const statements: string[] = [];
    const store = await pgliteStore({ db: await lite, schema, onQuery: (q) => statements.push(q.sql) });
    try {
      await insertRuns(db, schema, 20_000, true);
      await sql.raw(`analyze ${schema}.runs`).execute(db);
      statements.length = 0;
      expect(await store.listRuns({ tenantId: "t", projectId: "p-3", limit: 100 })).toHaveLength(100);
      const [text] = statements;
      // The store's own statement, prepared as it is sent (tenant, project, limit).
      await sql.raw(`prepare list_by_project as ${text}`).execute(db);
      const plan = await sql<{
        "QUERY PLAN": string;
      }>`explain execute list_by_project('t', 'p-3', 100)`.execute(db);
      await sql.raw("deallocate list_by_project").execute(db);
      const lines = plan.rows.map((r) => r["QUERY PLAN"]).join("\n");
      expect(lines).toMatch(/Index Scan using runs_project/);
      expect(lines).not.toMatch(/Seq Scan|Sort/);
    } finally {
      await store.close();
      await db.destroy();
    }
  });
});
