#!/usr/bin/env node
import { parseArgs } from "node:util";
import { PGlite } from "@electric-sql/pglite";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { lockDataDir } from "./data-dir-lock.js";
import { PGliteDialect } from "./driver/pglite-dialect.js";
import { checkSchema, migrate, validSchema } from "./migrator.js";

const USAGE = `Usage: openrath-migrate [--check] [--url <postgres url> | --pglite <dir>] [--schema <name>] [--grant <role>]

Applies the durable runtime's schema migrations (under an advisory lock, with checksums), or with
--check only reports whether this release can run against the database: every migration it knows
is applied unchanged, and anything newer is additive. Exit code 0: ready / migrated; 1: not ready
or failed; 2: bad usage.

  --url      PostgreSQL connection string (default: $OPENRATH_DATABASE_URL)
  --pglite   an embedded PGlite data directory instead of a server
  --schema   the schema (default: $OPENRATH_DB_SCHEMA or "openrath")
  --grant    after migrating, give this (runtime) role the row rights it needs and no DDL rights
  --check    do not change anything
`;

async function main(argv: string[]): Promise<number> {
  let values: {
    check?: boolean;
    url?: string;
    pglite?: string;
    schema?: string;
    grant?: string;
    help?: boolean;
  };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        check: { type: "boolean" },
        url: { type: "string" },
        pglite: { type: "string" },
        schema: { type: "string" },
        grant: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const schema = values.schema ?? process.env.OPENRATH_DB_SCHEMA ?? "openrath";
  const url = values.url ?? process.env.OPENRATH_DATABASE_URL;
  if (!values.pglite && !url) {
    process.stderr.write(`Give --url (or set OPENRATH_DATABASE_URL) or --pglite.\n\n${USAGE}`);
    return 2;
  }
  try {
    validSchema(schema);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return 2;
  }
  let unlock = () => {};
  let pglite: PGlite | undefined;
  if (values.pglite) {
    try {
      // The workers' store may have the directory open: two PGlites on it would corrupt it.
      unlock = lockDataDir(values.pglite);
    } catch (error) {
      process.stderr.write(`${(error as Error).message}\n`);
      return 1;
    }
    pglite = await PGlite.create({ dataDir: values.pglite });
  }
  const db = new Kysely<unknown>({
    dialect: pglite
      ? new PGliteDialect(pglite)
      : new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }),
  });
  try {
    if (values.check) {
      const check = await checkSchema(db, schema);
      if (check.ready) {
        const newer =
          check.newer.length > 0
            ? ` (and newer additive migrations ${check.newer.map((m) => m.version).join(", ")})`
            : "";
        process.stdout.write(
          `ready: schema "${schema}" has migrations ${check.applied.join(", ")}${newer}\n`,
        );
        return 0;
      }
      process.stdout.write(`not ready: ${check.problems.join("; ")}\n`);
      return 1;
    }
    const applied = await migrate(db, schema);
    process.stdout.write(
      applied.length > 0
        ? `applied migrations ${applied.join(", ")} to schema "${schema}"\n`
        : `schema "${schema}" is up to date\n`,
    );
    if (values.grant) {
      const role = sql.id(values.grant);
      const s = sql.id(schema);
      await sql`grant usage on schema ${s} to ${role}`.execute(db);
      await sql`grant select, insert, update, delete on all tables in schema ${s} to ${role}`.execute(db);
      await sql`grant usage, select on all sequences in schema ${s} to ${role}`.execute(db);
      process.stdout.write(`granted row access on schema "${schema}" to ${values.grant}\n`);
    }
    return 0;
  } catch (error) {
    process.stderr.write(`openrath-migrate failed: ${(error as Error).message}\n`);
    return 1;
  } finally {
    await db.destroy();
    await pglite?.close();
    unlock();
  }
}

process.exitCode = await main(process.argv.slice(2));
