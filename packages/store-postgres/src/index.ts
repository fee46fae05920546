/**
 * `@openrath/store-postgres`: the durable runtime's store on PostgreSQL (the `pg` driver) or
 * embedded PGlite (the default: no server to install), with one Kysely schema and one migration
 * set, `LISTEN/NOTIFY` signals, and the `openrath-migrate` command.
 */

export { PGliteDialect } from "./driver/pglite-dialect.js";
export { checksumOf, MIGRATIONS, type Migration } from "./migrations/index.js";
export { checkSchema, migrate, type SchemaCheck, validSchema } from "./migrator.js";
export type { PGliteInstance } from "./pglite-instance.js";
export {
  type PgliteStoreOptions,
  type PostgresStoreOptions,
  pgliteStore,
  postgresStore,
  type StoreOptionsBase,
} from "./postgres-store.js";
