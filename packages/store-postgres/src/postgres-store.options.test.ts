import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OpenRathError } from "@openrath/core";
import { afterAll, describe, expect, it } from "vitest";
import {
  type PgliteStoreOptions,
  type PostgresStoreOptions,
  pgliteStore,
  postgresStore,
} from "./postgres-store.js";

async function refusal(opening: Promise<unknown>): Promise<OpenRathError> {
  const error = await opening.then(
    () => {
      throw new Error("expected invalid_argument");
    },
    (error: unknown) => error,
  );
  expect(OpenRathError.isInstance(error, "invalid_argument"), String(error)).toBe(true);
  return error as OpenRathError;
}

const postgres = (options: unknown) => refusal(postgresStore(options as PostgresStoreOptions));
const pglite = (options: unknown) => refusal(pgliteStore(options as PgliteStoreOptions));

const dir = await mkdtemp(join(tmpdir(), "openrath-store-options-"));
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("postgresStore and pgliteStore options, checked before anything connects or is created", () => {
  it("names every bad option with its value and what is valid", async () => {
    const error = await pglite({ schema: "Runs", stepDurability: "fast", migrate: "yes" });
    expect(error.message.split("\n")).toEqual([
      "Invalid options of pgliteStore(), 3 problems:",
      '  - "schema" is "Runs"; it must be a lower-case identifier matching /^[a-z_][a-z0-9_]{0,62}$/.',
      '  - "migrate" is "yes"; it must be true or false.',
      '  - "stepDurability" is "fast"; it must be "relaxed" or "strict".',
    ]);
    expect(error.details).toMatchObject({ backend: "pgliteStore", field: "schema", value: "Runs" });
  });

  it("refuses an unknown option, listing the known ones, and creates no data directory", async () => {
    const dataDir = join(dir, "parent", "db");
    const error = await pglite({ dataDir, journalDurabilty: "strict" });
    expect(error.message).toContain(
      '"journalDurabilty" is "strict"; it is not an option of pgliteStore(); the fields are schema, migrate, journalDurability,',
    );
    expect(existsSync(join(dir, "parent"))).toBe(false);
    expect((await pglite({ db: {} })).message).toContain('"db" is {}; it must be an open PGlite instance.');
  });

  it("never shows the connection string or the pool's settings", async () => {
    const error = await postgres({
      connectionString: 5432,
      pool: "postgres://runtime:hunter22@127.0.0.1/app",
      onQuery: "log",
    });
    expect(`${error.message}${JSON.stringify(error.details)}`).not.toContain("hunter22");
    expect(error.details).toEqual({
      backend: "postgresStore",
      field: "onQuery",
      value: "log",
      issues: [
        { path: "onQuery", message: "it must be a function called with each statement", value: "log" },
        {
          path: "connectionString",
          message: "it must be a connection string such as postgres://runtime@127.0.0.1:5432/app",
        },
        { path: "pool", message: "it must be an object of pg pool settings" },
      ],
    });
    expect((await postgres({ connectionString: "postgres://h/db", pol: { max: 2 } })).message).toContain(
      '"pol" is {"max":2}; it is not an option of postgresStore(); the fields are',
    );
  });

  it("refuses options that are not an object, without showing them", async () => {
    const error = await postgres("postgres://runtime:hunter22@127.0.0.1/app");
    expect(error.message).toBe(
      'Invalid options of postgresStore(): the options are given (not shown: it may be a secret); postgresStore takes an object such as { connectionString: "postgres://…" }.',
    );
    expect((await pglite(".openrath/db")).message).toBe(
      'Invalid options of pgliteStore(): the options are ".openrath/db"; pgliteStore takes an object such as { dataDir: ".openrath/db" }.',
    );
  });
});
