/**
 * An open PGlite database, as {@link pgliteStore} and `PGliteDialect` take it: a `PGlite` instance
 * from `@electric-sql/pglite` has every member. The store's public types say only what it uses,
 * so an application that never hands the store a PGlite does not type-check PGlite's own
 * declarations (which need Emscripten's types, not a dependency of PGlite).
 *
 * @example
 * ```ts
 * import { PGlite } from "@electric-sql/pglite";
 * const db = await PGlite.create();
 * const store = await pgliteStore({ db }); // the store does not close it
 * ```
 */
export interface PGliteInstance {
  /** Whether `close()` has run. */
  readonly closed: boolean;
  close(): Promise<void>;
  /** Runs one statement with parameters. */
  query(query: string, params?: unknown[]): Promise<{ readonly rows: readonly unknown[] }>;
  /** Runs statements without parameters (several in one text). */
  exec(query: string): Promise<readonly unknown[]>;
  /** Whether a transaction is open on the connection. */
  isInTransaction(): boolean;
  /** Runs `fn` with nothing else of the database's in between. */
  runExclusive<T>(fn: () => Promise<T>): Promise<T>;
  /** Sends one wire-protocol message and parses the answer. */
  execProtocol(message: Uint8Array, options?: object): Promise<unknown>;
  /** Sends one wire-protocol message and hands the answer's bytes to `options.onRawData`. */
  execProtocolRawStream(message: Uint8Array, options?: object): Promise<void>;
  /** Listens on a `NOTIFY` channel; resolves to the function that stops listening. */
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
}
