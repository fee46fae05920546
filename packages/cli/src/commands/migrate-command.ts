import { existsSync } from "node:fs";
import { join } from "node:path";
import { OpenRathError } from "@openrath/core";
import { readConfig, stateDir } from "../config.js";
import type { Command } from "../internal/command.js";

/** `openrath migrate [--check]`: the store's schema migrations, as their own step. */
export const migrateCommand: Command = {
  name: "migrate",
  summary: "Apply the store's schema migrations (or --check that this release can run on it).",
  description: [
    "With DATABASE_URL: applies the pending migrations to PostgreSQL under an advisory lock, so",
    "several processes may start at once; `serve` and `worker` on PostgreSQL do not migrate by",
    "themselves. --check changes nothing and exits 1 when the schema is not ready (a readiness or",
    "pre-deploy probe). Without DATABASE_URL it does the same for the embedded store under --state.",
    "`openrath-migrate --grant <role>` (from @openrath/store-postgres) also grants a runtime role its rights.",
  ].join("\n"),
  args: [],
  options: [
    { name: "check", description: "Change nothing: exit 0 when the schema is ready, 1 when it is not." },
    {
      name: "state",
      value: "<dir>",
      description:
        "The embedded store's directory (default $OPENRATH_STATE or ./.openrath), without DATABASE_URL.",
    },
  ],
  examples: [
    "DATABASE_URL=postgres://… openrath migrate",
    "DATABASE_URL=postgres://… openrath migrate --check",
  ],
  async run(ctx, { options }) {
    const config = readConfig(ctx.env);
    const { pgliteStore, postgresStore } = await import("@openrath/store-postgres");
    const migrate = options.check !== true;
    const where = config.DATABASE_URL
      ? "PostgreSQL (DATABASE_URL)"
      : join(stateDir(ctx, config, options), "db");
    if (!migrate && !config.DATABASE_URL && !existsSync(where))
      throw new OpenRathError("not_found", `No embedded store at ${where}: nothing to migrate or check`, {
        details: { dataDir: where },
      });
    // Opening the store migrates it (or, with `migrate: false`, checks it and fails with schema_mismatch).
    const store = config.DATABASE_URL
      ? await postgresStore({
          connectionString: config.DATABASE_URL,
          schema: config.OPENRATH_DB_SCHEMA,
          migrate,
        })
      : await pgliteStore({ dataDir: where, migrate });
    await store.close();
    ctx.stdout.write(migrate ? `${where}: the schema is up to date.\n` : `${where}: ready.\n`);
    return 0;
  },
};
