import { DurableError } from "@openrath/runtime-durable/store";
import { type Kysely, sql } from "kysely";
import { checksumOf, MIGRATIONS, type Migration } from "./migrations/index.js";

/** What a schema name may be: a lower-case identifier. */
export const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Checks a schema name (lower-case identifier) and returns it. @throws code `invalid_argument`. */
export function validSchema(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) {
    throw new DurableError(
      "invalid_argument",
      `Schema name ${JSON.stringify(schema)} is not valid: use a lower-case identifier matching ${SCHEMA_NAME}.`,
      { details: { schema } },
    );
  }
  return schema;
}

/** What `checkSchema` found. */
export interface SchemaCheck {
  /** The code can run against this database: every known migration applied with its checksum, and anything newer additive. */
  readonly ready: boolean;
  /** Versions recorded in the database. */
  readonly applied: readonly number[];
  /** Known versions not applied yet. */
  readonly pending: readonly number[];
  /** Versions newer than this code knows (accepted when additive). */
  readonly newer: readonly { readonly version: number; readonly name: string; readonly additive: boolean }[];
  /** Why not ready, one line each. */
  readonly problems: readonly string[];
}

interface AppliedRow {
  version: number;
  name: string;
  checksum: string;
  additive: boolean;
}

async function readApplied<DB>(db: Kysely<DB>, schema: string): Promise<AppliedRow[] | undefined> {
  const exists = await sql<{
    present: boolean;
  }>`select to_regclass(${`${schema}.schema_migrations`}) is not null as present`.execute(db);
  if (!exists.rows[0]?.present) return undefined;
  const rows =
    await sql<AppliedRow>`select version, name, checksum, additive from ${sql.table(`${schema}.schema_migrations`)} order by version`.execute(
      db,
    );
  return rows.rows.map((r) => ({ ...r, version: Number(r.version) }));
}

/**
 * Whether this code can run against the database's schema: every migration it knows is applied
 * with the same checksum, and any newer one (from a later release) is additive — so an N−1 worker
 * stays ready against an N schema during a rollback window. Reads only; needs no DDL rights.
 */
export async function checkSchema<DB>(
  db: Kysely<DB>,
  schema: string,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<SchemaCheck> {
  validSchema(schema);
  const applied = (await readApplied(db, schema)) ?? [];
  const known = new Map(migrations.map((m) => [m.version, m]));
  const problems: string[] = [];
  const newer: { version: number; name: string; additive: boolean }[] = [];
  for (const row of applied) {
    const migration = known.get(row.version);
    if (!migration) {
      newer.push({ version: row.version, name: row.name, additive: row.additive });
      if (!row.additive)
        problems.push(`migration ${row.version} (${row.name}) is newer than this code and not additive`);
    } else if (checksumOf(migration) !== row.checksum) {
      problems.push(
        `migration ${row.version} (${row.name}) was applied with checksum ${row.checksum}, this code has ${checksumOf(migration)}`,
      );
    }
  }
  const appliedVersions = applied.map((r) => r.version);
  const pending = migrations.filter((m) => !appliedVersions.includes(m.version)).map((m) => m.version);
  if (applied.length === 0)
    problems.push(`schema "${schema}" has no migrations applied; run openrath-migrate`);
  else if (pending.length > 0)
    problems.push(`migrations ${pending.join(", ")} are not applied; run openrath-migrate`);
  return { ready: problems.length === 0, applied: appliedVersions, pending, newer, problems };
}

/**
 * Applies the pending migrations under a PostgreSQL advisory lock (two migrators never race: the
 * second waits, then finds nothing to do), each in its own transaction with its checksum
 * recorded. Refuses to run when an applied migration's checksum differs from this code's.
 *
 * @returns the versions it applied.
 * @throws {DurableError} code `schema_mismatch` on a checksum mismatch or a newer non-additive schema.
 */
export async function migrate<DB>(
  db: Kysely<DB>,
  schema: string,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<number[]> {
  validSchema(schema);
  return db.connection().execute(async (conn) => {
    const key = `openrath.migrate.${schema}`;
    await sql`select pg_advisory_lock(hashtext(${key}))`.execute(conn);
    try {
      await sql.raw(`create schema if not exists ${schema}`).execute(conn);
      await sql
        .raw(
          `create table if not exists ${schema}.schema_migrations (version integer primary key, name text not null, checksum text not null, additive boolean not null default false, applied_at timestamptz not null default now())`,
        )
        .execute(conn);
      const check = await checkSchema(conn, schema, migrations);
      const fatal = check.problems.filter((p) => !p.includes("run openrath-migrate"));
      if (fatal.length > 0) {
        throw new DurableError("schema_mismatch", `Cannot migrate schema "${schema}": ${fatal.join("; ")}.`, {
          details: { schema, problems: fatal },
        });
      }
      const done: number[] = [];
      for (const migration of migrations) {
        if (check.applied.includes(migration.version)) continue;
        await sql`begin`.execute(conn);
        try {
          await sql.raw(migration.sql.replaceAll("{schema}", schema)).execute(conn);
          await sql`insert into ${sql.table(`${schema}.schema_migrations`)} (version, name, checksum, additive) values (${migration.version}, ${migration.name}, ${checksumOf(migration)}, ${migration.additive})`.execute(
            conn,
          );
          await sql`commit`.execute(conn);
        } catch (error) {
          await sql`rollback`.execute(conn);
          throw error;
        }
        done.push(migration.version);
      }
      return done;
    } finally {
      await sql`select pg_advisory_unlock(hashtext(${key}))`.execute(conn);
    }
  });
}
