import { randomUUID } from "node:crypto";
import { serviceAvailable } from "@openrath/testing";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { spawnSyncOpenrath } from "../testing/run-cli.js";

const POSTGRES_URL = process.env.OPENRATH_TEST_POSTGRES_URL;
const postgres = await serviceAvailable("postgres", async () => {
  if (!POSTGRES_URL)
    throw new Error("OPENRATH_TEST_POSTGRES_URL is not set (tooling/scripts/services.mjs starts it)");
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  await client.end();
  return true;
});
const schema = `cli_migrate_${randomUUID().slice(0, 8)}`;

const openrath = (args: string[]) =>
  spawnSyncOpenrath(args, { DATABASE_URL: POSTGRES_URL ?? "", OPENRATH_DB_SCHEMA: schema });

afterAll(async () => {
  if (!postgres.available) return;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  await client.query(`drop schema if exists ${schema} cascade`);
  await client.end();
});

describe.skipIf(!postgres.available)(`openrath migrate on PostgreSQL (${postgres.reason})`, () => {
  it("--check fails on a fresh schema, migrate applies it, then --check passes and the store opens", () => {
    const before = openrath(["migrate", "--check"]);
    expect(before.code).toBe(1);
    expect(before.stderr).toMatch(/\[schema_mismatch\]\n$/);
    const runsBefore = openrath(["runs", "list"]);
    expect(runsBefore.stderr).toContain("[schema_mismatch]");
    const applied = openrath(["migrate"]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toBe("PostgreSQL (DATABASE_URL): the schema is up to date.\n");
    expect(openrath(["migrate"]).code).toBe(0);
    const after = openrath(["migrate", "--check"]);
    expect(after).toMatchObject({ code: 0, stdout: "PostgreSQL (DATABASE_URL): ready.\n" });
    expect(openrath(["runs", "list"]).stdout).toBe("No runs.\n");
  });
});
