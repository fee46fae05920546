import { describe, expect, it } from "vitest";
import { POSTGRES_URL, postgresAvailable, schemaPerFile } from "../testing/postgres.js";
import { spawnSyncOpenrath } from "../testing/run-cli.js";

const postgres = await postgresAvailable();
const schema = schemaPerFile("cli_migrate", postgres);

const openrath = (args: string[]) =>
  spawnSyncOpenrath(args, { DATABASE_URL: POSTGRES_URL ?? "", OPENRATH_DB_SCHEMA: schema });

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
