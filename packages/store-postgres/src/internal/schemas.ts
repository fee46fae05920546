import type pg from "pg";
import * as z from "zod";
import { SCHEMA_NAME } from "../migrator.js";
import type { PGliteInstance } from "../pglite-instance.js";
import type { QueryEvent } from "../postgres-store.js";

const durability = z.enum(["relaxed", "strict"], { error: 'it must be "relaxed" or "strict"' }).optional();

/** The options both drivers take (see `StoreOptionsBase`). */
const base = {
  schema: z
    .string({ error: "it must be a schema name" })
    .regex(SCHEMA_NAME, `it must be a lower-case identifier matching ${SCHEMA_NAME}`)
    .optional(),
  migrate: z.boolean({ error: "it must be true or false" }).optional(),
  journalDurability: durability,
  stepDurability: durability,
  onQuery: z
    .custom<(event: QueryEvent) => void>((value) => typeof value === "function", {
      error: "it must be a function called with each statement",
    })
    .optional(),
};

/** The options of `postgresStore`. `connectionString` and `pool` may hold passwords. */
export const PostgresStoreOptionsSchema = z.strictObject(
  {
    ...base,
    // Its form (a postgres: URL, a port in range) is checked by `connectionTarget`, which names it redacted.
    connectionString: z
      .string({ error: "it must be a connection string such as postgres://runtime@127.0.0.1:5432/app" })
      .optional(),
    pool: z
      .custom<pg.PoolConfig>((value) => typeof value === "object" && value !== null, {
        error: "it must be an object of pg pool settings",
      })
      .optional(),
  },
  { error: 'postgresStore takes an object such as { connectionString: "postgres://…" }' },
);

/** The options of `pgliteStore`. */
export const PgliteStoreOptionsSchema = z.strictObject(
  {
    ...base,
    dataDir: z.string({ error: "it must be a directory path" }).optional(),
    db: z
      .custom<PGliteInstance>(
        (value) =>
          typeof value === "object" &&
          value !== null &&
          typeof (value as PGliteInstance).query === "function" &&
          typeof (value as PGliteInstance).listen === "function",
        { error: "it must be an open PGlite instance" },
      )
      .optional(),
  },
  { error: 'pgliteStore takes an object such as { dataDir: ".openrath/db" }' },
);
