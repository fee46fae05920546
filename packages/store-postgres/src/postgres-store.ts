import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { checkOptions } from "@openrath/core/backend";
import { DurableError, type RunStoreCapabilities, type RunStoreV1 } from "@openrath/runtime-durable/store";
import { Kysely, type Logger, PostgresDialect } from "kysely";
import pg from "pg";
import { connectionTarget, openFailure } from "./connection-errors.js";
import { lockDataDir } from "./data-dir-lock.js";
import { PGliteDialect } from "./driver/pglite-dialect.js";
import { preparedPool } from "./driver/prepared-pool.js";
import { PgliteStoreOptionsSchema, PostgresStoreOptionsSchema } from "./internal/schemas.js";
import { checkSchema, migrate, validSchema } from "./migrator.js";
import type { PGliteInstance } from "./pglite-instance.js";
import type { Database } from "./schema.js";
import { notifySignals } from "./signals/notify-signals.js";
import { pgliteTransport, pgTransport } from "./signals/transports.js";
import { mapDriverError, type StoreContext, storeContext } from "./store/context.js";
import { KyselyRunStore } from "./store/run-store.js";

/** Options shared by both drivers. */
export interface StoreOptionsBase {
  /** The PostgreSQL schema holding the tables (default `"openrath"`). */
  readonly schema?: string;
  /**
   * Apply pending migrations when the store opens (default: true for PGlite, false for a server,
   * where `openrath-migrate` runs them as its own step and role). Without it the store checks that
   * the schema is ready and fails with `schema_mismatch` otherwise.
   */
  readonly migrate?: boolean;
  /**
   * How the step journal's frequent writes commit. `"relaxed"` (default): journal entries, call
   * outcomes and the dispatch of effects that are safe to repeat commit without waiting for the WAL
   * flush — a database crash may lose the last moments of them (those calls are made again; an
   * effect whose outcome is lost is judged ambiguous by the next lease), and any later flushed
   * commit makes them durable, since the WAL is flushed in order. The dispatch of an effect that is
   * not safe to repeat, parks and decisions always wait for the flush. `"strict"`: every journal
   * write waits for it. Applies to a PostgreSQL server: PGlite always commits the journal strictly
   * (it has no WAL writer, so a relaxed commit would be lost with the process).
   */
  readonly journalDurability?: "relaxed" | "strict";
  /**
   * How a step commit that does not end its run commits. `"relaxed"` (default): without waiting for
   * the WAL flush, as the journal's writes do (ADR 0018, decision 1). A worker crash loses nothing (the commit is
   * done); a *database* crash may lose the last moments of step commits, and those steps run again
   * (steps are at-least-once). What is acknowledged outside the worker always waits for the flush:
   * submissions, claims, a run's end with its last checkpoint, retries, parks, decisions, and the
   * commit of a step that dispatched an effect not safe to repeat; and since the WAL is flushed in
   * order, each of them makes every earlier relaxed commit durable. `"strict"`: every step commit
   * waits for the flush (one WAL flush per step).
   */
  readonly stepDurability?: "relaxed" | "strict";
  /**
   * Called after every statement the store sends (transaction `begin`/`commit` included), with its
   * SQL text and how long it took: for counting round trips and profiling. Default: none.
   */
  readonly onQuery?: (event: QueryEvent) => void;
}

/** One statement the store sent (see {@link StoreOptionsBase.onQuery}). */
export interface QueryEvent {
  readonly sql: string;
  readonly durationMs: number;
  /** Whether it failed. */
  readonly failed: boolean;
}

function kyselyLog(options: StoreOptionsBase): { log?: Logger } {
  const onQuery = options.onQuery;
  if (!onQuery) return {};
  return {
    log: (event) => {
      onQuery({
        sql: event.query.sql,
        durationMs: event.queryDurationMillis,
        failed: event.level === "error",
      });
    },
  };
}

/** Options of {@link postgresStore}. */
export interface PostgresStoreOptions extends StoreOptionsBase {
  /** A connection string such as `postgres://runtime@127.0.0.1:5432/app`. */
  readonly connectionString?: string;
  /** Pool settings for `pg` (merged over `connectionString`); `max` defaults to 10. */
  readonly pool?: pg.PoolConfig;
}

/** Options of {@link pgliteStore}. */
export interface PgliteStoreOptions extends StoreOptionsBase {
  /** A directory for the database files; omitted: in memory, gone when the process ends. */
  readonly dataDir?: string;
  /** An open `PGlite` instance to use instead (the store does not close it). */
  readonly db?: PGliteInstance;
}

const CAPABILITIES_SERVER: RunStoreCapabilities = Object.freeze({
  multiProcess: true,
  notifiesOnCommit: true,
  databaseClock: true,
  retention: true,
  tenantLimits: true,
  journal: true,
  deployments: true,
  groupCommit: true,
  newSessionSubmit: true,
  claimOnSubmit: true,
  access: true,
  schedules: true,
  webhooks: true,
  messageQueue: true,
  stats: true,
});

const CAPABILITIES_EMBEDDED: RunStoreCapabilities = Object.freeze({
  ...CAPABILITIES_SERVER,
  multiProcess: false,
});

/** Sends one notification through the store's connections. */
async function notify(db: Kysely<Database>, channel: string, payload: string): Promise<void> {
  await db
    .selectNoFrom((eb) => eb.fn("pg_notify", [eb.val(channel), eb.val(payload)]).as("notified"))
    .execute();
}

/** Opens the store over `db`: migrates or checks the schema first. */
async function open(
  name: string,
  db: Kysely<Database>,
  options: StoreOptionsBase & { migrateDefault: boolean },
  makeSignals: (c: StoreContext) => ReturnType<typeof notifySignals>,
  capabilities: RunStoreCapabilities,
  onClose: () => Promise<void>,
): Promise<RunStoreV1> {
  let schema: string;
  try {
    schema = validSchema(options.schema ?? "openrath");
    if (options.migrate ?? options.migrateDefault) await migrate(db, schema);
    else {
      const check = await checkSchema(db, schema);
      if (!check.ready) {
        throw new DurableError(
          "schema_mismatch",
          `The database schema "${schema}" is not ready for this release: ${check.problems.join("; ")}.`,
          {
            details: { schema, ...check },
          },
        );
      }
    }
  } catch (error) {
    await onClose().catch(() => {});
    throw mapDriverError(error);
  }
  // Frequent writes publish after commit (see StoreContext.publish): on a server over the
  // listening connection, on PGlite straight to the listeners of the same database.
  let signals: ReturnType<typeof notifySignals> | undefined;
  const c = storeContext(
    db,
    schema,
    (committed) => signals?.publishCommitted(committed),
    // PGlite runs without fsync (and in one process): a relaxed commit would save nothing there.
    capabilities.multiProcess && options.stepDurability !== "strict",
    capabilities.multiProcess,
  );
  signals = makeSignals(c);
  return new KyselyRunStore(name, capabilities, signals, c, onClose, options.journalDurability);
}

/**
 * A run store on a PostgreSQL server through `pg`: many workers in many processes on many
 * machines share it. Migrations are not applied unless `migrate: true`; run `openrath-migrate`
 * with the migration role, and give the runtime a role without DDL rights.
 *
 * @example
 * ```ts
 * const store = await postgresStore({ connectionString: process.env.DATABASE_URL });
 * const runtime = createDurableRuntime({ store });
 * ```
 * @throws {OpenRathError} `invalid_argument` for a bad or unknown option, before anything connects
 *   (no message shows the connection string or the pool's settings).
 * @throws {DurableError} `invalid_argument` for a malformed connection string (not a URL, another
 *   scheme than `postgres:`, a port out of range); `store_unavailable` when the server cannot be
 *   reached, refuses the login or has no such database (`details.reason` says which, `details.url`
 *   names the server without the password); `schema_mismatch` when the schema is not migrated.
 */
export async function postgresStore(given: PostgresStoreOptions = {}): Promise<RunStoreV1> {
  const options = checkOptions(PostgresStoreOptionsSchema, given, {
    backend: "postgresStore",
    // `""`: the options themselves, which may be a connection string passed in their place.
    secrets: ["", "connectionString", "pool"],
  });
  const config: pg.PoolConfig = {
    max: 10,
    ...(options.connectionString !== undefined ? { connectionString: options.connectionString } : {}),
    ...options.pool,
  };
  // Checked before anything connects; errors name this target, never its password.
  const target = connectionTarget(config);
  const pool = new pg.Pool(config);
  // A server restart surfaces as an error event on every client. The pool drops idle ones itself;
  // a checked-out one has no listener (pg-pool removes its own on checkout), and an unhandled
  // error event would end the process, so each client gets one. Its failed query rejects anyway,
  // and the pool discards the broken client when it is released.
  pool.on("error", () => {});
  pool.on("connect", (client) => {
    client.on("error", () => {});
  });
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: preparedPool(pool) }),
    ...kyselyLog(options),
  });
  return open(
    "postgres",
    db,
    { ...options, migrateDefault: false },
    (c) =>
      notifySignals(
        "postgres-notify",
        c.channels,
        pgTransport(config, c.channels, (channel, payload) => notify(db, channel, payload)),
        true,
      ),
    CAPABILITIES_SERVER,
    () => db.destroy(),
  ).catch((error: unknown) => {
    throw openFailure(error, target);
  });
}

/**
 * The embedded run store: PostgreSQL compiled to WebAssembly (PGlite) in this process, in a
 * directory on disk or in memory. Nothing to install or start; signals stay in-process. The
 * schema and SQL are the same as on a server.
 *
 * @example
 * ```ts
 * const store = await pgliteStore({ dataDir: ".openrath/db" });
 * ```
 * @throws {OpenRathError} `invalid_argument` for a bad or unknown option, before anything is opened.
 */
export async function pgliteStore(given: PgliteStoreOptions = {}): Promise<RunStoreV1> {
  const options = checkOptions(PgliteStoreOptionsSchema, given, { backend: "pgliteStore" });
  const owned = options.db === undefined;
  // PGlite creates only the last directory of the path.
  if (owned && options.dataDir) await mkdir(dirname(options.dataDir), { recursive: true });
  // One process at a time: a second PGlite on the same directory corrupts it.
  const unlock = owned && options.dataDir ? lockDataDir(options.dataDir) : () => {};
  let pglite: PGlite;
  try {
    pglite =
      (options.db as PGlite | undefined) ??
      (await PGlite.create(options.dataDir ? { dataDir: options.dataDir } : {}));
  } catch (error) {
    unlock();
    throw error;
  }
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite), ...kyselyLog(options) });
  return open(
    "pglite",
    db,
    { ...options, migrateDefault: true },
    (c) =>
      notifySignals(
        "pglite-notify",
        c.channels,
        pgliteTransport(pglite, c.channels, (channel, payload) => notify(db, channel, payload)),
        false,
      ),
    CAPABILITIES_EMBEDDED,
    async () => {
      await db.destroy();
      if (owned && !pglite.closed) await pglite.close();
      unlock();
    },
  );
}
