import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Session } from "@openrath/core";
import { createDurableRuntime, defineWorkflow } from "@openrath/runtime-durable";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { MIGRATIONS } from "./migrations/index.js";
import { checkSchema, migrate } from "./migrator.js";
import { postgresStore } from "./postgres-store.js";
import type { Database } from "./schema.js";
import { storeContext } from "./store/context.js";
import { claimCandidates } from "./store/runs.js";
import { POSTGRES_URL, postgres } from "./testing/postgres-url.js";

const run = promisify(execFile);
const bin = fileURLToPath(new URL("./bin.ts", import.meta.url));

/** Runs `openrath-migrate` from source; resolves with its exit code and output. */
async function migrateCli(args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      ["--conditions=@openrath/source", "--import", "tsx", bin, ...args],
      { cwd: fileURLToPath(new URL("..", import.meta.url)) },
    );
    return { code: 0, out: stdout + stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout + e.stderr };
  }
}

function urlAs(role: string): string {
  const url = new URL(POSTGRES_URL!);
  url.username = role;
  url.password = "";
  return url.toString();
}

const admin = postgres.available ? new pg.Pool({ connectionString: POSTGRES_URL, max: 2 }) : undefined;
afterAll(() => admin?.end());

describe.skipIf(!postgres.available)(`migrations on PostgreSQL (${postgres.reason})`, () => {
  it("a migration role owns the schema; the runtime role runs workflows without DDL rights and cannot alter it", async () => {
    const tag = randomBytes(4).toString("hex");
    const schema = `roles_${tag}`;
    const migrator = `openrath_migrate_${tag}`;
    const runtimeRole = `openrath_runtime_${tag}`;
    await admin!.query(`create role ${migrator} login`);
    await admin!.query(`create role ${runtimeRole} login`);
    await admin!.query(`grant create on database postgres to ${migrator}`);

    expect(await migrateCli(["--url", urlAs(migrator), "--schema", schema, "--check"])).toMatchObject({
      code: 1,
      out: expect.stringMatching(/no migrations applied/),
    });
    const applied = await migrateCli(["--url", urlAs(migrator), "--schema", schema, "--grant", runtimeRole]);
    expect(applied).toMatchObject({
      code: 0,
      out: expect.stringMatching(
        new RegExp(`applied migrations ${MIGRATIONS.map((m) => m.version).join(", ")}`),
      ),
    });
    expect(await migrateCli(["--url", urlAs(runtimeRole), "--schema", schema, "--check"])).toMatchObject({
      code: 0,
      out: expect.stringMatching(/^ready/),
    });

    const store = await postgresStore({ connectionString: urlAs(runtimeRole), schema });
    try {
      const runtime = createDurableRuntime({ store });
      await runtime.register(
        defineWorkflow("roles").step("only", (s) => s.append({ kind: "assistant", content: "done" }), {
          entry: true,
        }),
      );
      const worker = runtime.worker({ leaseMs: 2_000 });
      await worker.start();
      const submitted = await runtime.submit("roles", Session.fromUserMessage("as the runtime role"));
      expect((await runtime.result(submitted.id)).text()).toBe("done");
      await worker.stop();
      await runtime.store.applyRetention([{ workflow: "roles", keepForMs: 0 }]);
    } finally {
      await store.close();
    }
    const asRuntime = new pg.Client({ connectionString: urlAs(runtimeRole) });
    await asRuntime.connect();
    try {
      for (const ddl of [
        `alter table ${schema}.runs add column sneaky integer`,
        `drop table ${schema}.run_events`,
        `create table ${schema}.extra (id integer)`,
        `create index sneaky on ${schema}.runs (workflow)`,
        `truncate ${schema}.checkpoints`,
      ]) {
        await expect(asRuntime.query(ddl), ddl).rejects.toMatchObject({
          code: expect.stringMatching(/^(42501)$/),
        });
      }
    } finally {
      await asRuntime.end();
    }
    await admin!.query(`drop schema ${schema} cascade`);
    await admin!.query(`revoke create on database postgres from ${migrator}`);
    await admin!.query(`drop role ${runtimeRole}`);
    await admin!.query(`drop role ${migrator}`);
  });

  it("--check accepts a newer additive schema (N−1 stays ready), and refuses a non-additive or altered one", async () => {
    const schema = `check_${randomBytes(4).toString("hex")}`;
    const db = new Kysely<unknown>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: POSTGRES_URL, max: 2 }) }),
    });
    try {
      await migrate(db, schema);
      const table = sql.table(`${schema}.schema_migrations`);
      await sql`insert into ${table} (version, name, checksum, additive) values (9001, 'future_columns', 'abc', true)`.execute(
        db,
      );
      expect(await checkSchema(db, schema)).toMatchObject({
        ready: true,
        newer: [{ version: 9001, additive: true }],
      });
      expect(await migrateCli(["--url", POSTGRES_URL!, "--schema", schema, "--check"])).toMatchObject({
        code: 0,
        out: expect.stringMatching(/newer additive migrations 9001/),
      });
      await sql`insert into ${table} (version, name, checksum, additive) values (9002, 'rewrite', 'def', false)`.execute(
        db,
      );
      expect((await checkSchema(db, schema)).ready).toBe(false);
      expect(await migrateCli(["--url", POSTGRES_URL!, "--schema", schema, "--check"])).toMatchObject({
        code: 1,
        out: expect.stringMatching(/not additive/),
      });
      await sql`delete from ${table} where version = 9002`.execute(db);
      await sql`update ${table} set checksum = 'tampered' where version = 1`.execute(db);
      expect((await checkSchema(db, schema)).problems).toEqual([expect.stringMatching(/checksum tampered/)]);
      await expect(migrate(db, schema)).rejects.toMatchObject({ code: "schema_mismatch" });
      await expect(postgresStore({ connectionString: POSTGRES_URL, schema })).rejects.toMatchObject({
        code: "schema_mismatch",
      });
    } finally {
      await sql.raw(`drop schema if exists ${schema} cascade`).execute(db);
      await db.destroy();
    }
  });

  it("migration 4 rebuilds the checkpoints table and gives its row rights back to the roles that had them", async () => {
    const tag = randomBytes(4).toString("hex");
    const schema = `regrant_${tag}`;
    const role = `openrath_runtime_${tag}`;
    const db = new Kysely<unknown>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: POSTGRES_URL, max: 1 }) }),
    });
    try {
      await migrate(db, schema, MIGRATIONS.slice(0, 3));
      await sql.raw(`create role ${role} login`).execute(db);
      await sql.raw(`grant usage on schema ${schema} to ${role}`).execute(db);
      await sql
        .raw(`grant select, insert, update, delete on all tables in schema ${schema} to ${role}`)
        .execute(db);
      expect(await migrate(db, schema)).toEqual(MIGRATIONS.slice(3).map((m) => m.version));
      const rights = await sql<{ privilege: string; granted: boolean }>`select p as privilege,
        has_table_privilege(${role}, ${`${schema}.checkpoints`}, p) as granted
        from unnest(array['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']) p`.execute(db);
      expect(Object.fromEntries(rights.rows.map((r) => [r.privilege, r.granted]))).toEqual({
        SELECT: true,
        INSERT: true,
        UPDATE: true,
        DELETE: true,
        TRUNCATE: false,
      });
    } finally {
      await sql.raw(`drop schema if exists ${schema} cascade`).execute(db);
      await sql.raw(`drop role if exists ${role}`).execute(db);
      await db.destroy();
    }
  });

  it("two migrators at once: the advisory lock lets one apply, the other finds nothing to do", async () => {
    const schema = `race_${randomBytes(4).toString("hex")}`;
    const dbs = [0, 1, 2].map(
      () =>
        new Kysely<unknown>({
          dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: POSTGRES_URL, max: 1 }) }),
        }),
    );
    try {
      const results = await Promise.all(dbs.map((db) => migrate(db, schema)));
      const all = MIGRATIONS.map((m) => m.version);
      expect(results.map((r) => r.length).sort()).toEqual([0, 0, all.length]);
      expect((await checkSchema(dbs[0]!, schema)).applied).toEqual(all);
    } finally {
      await sql.raw(`drop schema if exists ${schema} cascade`).execute(dbs[0]!);
      for (const db of dbs) await db.destroy();
    }
  });

  it("the claim query is served by the partial claim index", async () => {
    const schema = `explain_${randomBytes(4).toString("hex")}`;
    const db = new Kysely<unknown>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: POSTGRES_URL, max: 1 }) }),
    });
    try {
      await migrate(db, schema);
      const s = schema;
      await sql
        .raw(`insert into ${s}.plans (hash, name, version, definition) values ('p', 'p', '1', '{}')`)
        .execute(db);
      await sql
        .raw(
          `insert into ${s}.runs (id, tenant_id, session_id, plan_hash, workflow, status, fingerprint, priority)
           select gen_random_uuid(), 't', 's' || g, 'p', 'p', case when g % 10 = 0 then 'queued' else 'succeeded' end, 'f', g % 7
           from generate_series(1, 20000) g`,
        )
        .execute(db);
      await sql.raw(`analyze ${s}.runs; analyze ${s}.tenant_limits`).execute(db);
      const c = storeContext(db as unknown as Kysely<Database>, schema);
      const plan = await sql<{ "QUERY PLAN": string }>`explain ${claimCandidates(c, ["p"], 8)}`.execute(db);
      const text = plan.rows.map((r) => r["QUERY PLAN"]).join("\n");
      expect(text).toMatch(/Index Scan (using|on) runs_claim/);
      expect(text).not.toMatch(/Seq Scan on runs/);
    } finally {
      await sql.raw(`drop schema if exists ${schema} cascade`).execute(db);
      await db.destroy();
    }
  });
});
