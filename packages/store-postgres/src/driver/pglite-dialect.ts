import { randomBytes } from "node:crypto";
import { MemoryFS, type messages, type PGlite, parse, protocol } from "@electric-sql/pglite";
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from "kysely";
import type { PGliteInstance } from "../pglite-instance.js";
import {
  bindExecuteSync,
  databaseError,
  type ResultColumns,
  readRaw,
  resultColumns,
  wireValues,
} from "./pglite-wire.js";
import { isStalePlan, StatementNames } from "./prepared-pool.js";

/**
 * A Kysely dialect over one embedded PGlite database. PGlite is a single connection, so the
 * driver hands it to one holder at a time: a transaction keeps it from `BEGIN` to `COMMIT`, and
 * every other query waits its turn instead of landing inside someone else's transaction.
 *
 * Statements with parameters run as named prepared statements over PGlite's wire-protocol entries
 * (inside `runExclusive` so nothing else of PGlite's interleaves): parsed and planned once, then one
 * bind-and-execute per call. `PGlite.query` parses and plans every call, which for the store's long
 * CTE statements costs several times their execution. Each call sends one message (`Bind`,
 * `Execute`, `Sync`; no `Describe` of the portal, whose row description PGlite parses more slowly
 * than PostgreSQL reads a row by its key), with `bytea` values as bytes, and reads the answer from
 * its bytes (`execProtocolRawStream`; see `pglite-wire.ts`), except for statements that send
 * notifications, which go through `execProtocol` so that PGlite hands them to its listeners.
 * ADR 0018, decision 10.
 */
export class PGliteDialect implements Dialect {
  private readonly db: PGlite;

  /** `db` is a `PGlite` instance (typed by what the store uses, so PGlite's types stay private). */
  constructor(db: PGliteInstance) {
    this.db = db as PGlite;
  }

  createAdapter() {
    return new PostgresAdapter();
  }

  createDriver(): Driver {
    return new PGliteDriver(this.db);
  }

  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }

  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db);
  }
}

class PGliteDriver implements Driver {
  private tail: Promise<void> = Promise.resolve();
  private readonly connection: PGliteConnection;

  constructor(db: PGlite) {
    this.connection = new PGliteConnection(db);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    let release!: () => void;
    const previous = this.tail;
    this.tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    await previous;
    this.connection.release = release;
    return this.connection;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const level = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : "";
    // Through the connection (not PGlite directly), so Kysely's query log sees them as on a server.
    await connection.executeQuery(CompiledQuery.raw(`begin${level}`));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("commit"));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("rollback"));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const c = connection as PGliteConnection;
    const release = c.release;
    c.release = undefined;
    release?.();
  }

  async destroy(): Promise<void> {}
}

const { serialize } = protocol;

function concat(parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** What a prepared statement needs at each execution: its parameter types and result columns. */
interface Prepared {
  readonly types: readonly number[];
  /** From the statement's row description (`Describe` of the statement); none when it returns no rows. */
  readonly columns: ResultColumns | undefined;
  /** Whether an execution of it sent notifications (its commit's NOTIFY). */
  notifies: boolean;
}

/**
 * The `syncToFs` of PGlite's Emscripten file systems (in memory, and a directory through Node's
 * `fs`), which does nothing: their writes reach memory or the operating system as PostgreSQL makes
 * them. PGlite still calls it after every protocol message, through a mutex; on those file systems
 * the dialect does not ask it to. Any other file system (one that copies out, like IndexedDB's) is
 * synced after every statement, as PGlite does by default.
 */
const BUILTIN_SYNC = MemoryFS.prototype.syncToFs;

/** One `pg_notify` per (channel, payload), in order, in one statement. */
const RENOTIFY =
  "select pg_notify(n.channel, n.payload) from unnest($1::text[], $2::text[]) with ordinality as n(channel, payload, i) order by n.i";

/** A text array literal's quoted item. */
function arrayItem(text: string): string {
  return `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

class PGliteConnection implements DatabaseConnection {
  release: (() => void) | undefined;
  private readonly names = new StatementNames(`openrath_${randomBytes(4).toString("hex")}`);
  private readonly prepared = new Map<string, Prepared>();

  constructor(readonly db: PGlite) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (query.parameters.length === 0) {
      // Without parameters the text may hold several statements (migrations): PGlite's exec runs them.
      const results = await this.db.exec(query.sql);
      const last = results.at(-1);
      return {
        rows: (last?.rows ?? []) as R[],
        ...(last?.affectedRows !== undefined ? { numAffectedRows: BigInt(last.affectedRows) } : {}),
      };
    }
    const name = this.names.nameOf(query.sql);
    if (name === undefined) {
      const result = await this.db.query<R>(query.sql, query.parameters as unknown[]);
      return {
        rows: result.rows,
        ...(result.affectedRows !== undefined ? { numAffectedRows: BigInt(result.affectedRows) } : {}),
      };
    }
    try {
      return await this.executePrepared<R>(name, query);
    } catch (error) {
      if (!isStalePlan(error)) throw error;
      this.names.reset();
      this.prepared.clear();
      if (this.db.isInTransaction()) throw error;
      return this.executeQuery(query);
    }
  }

  private executePrepared<R>(name: string, query: CompiledQuery): Promise<QueryResult<R>> {
    return this.db.runExclusive(async () => {
      let prepared = this.prepared.get(name);
      if (prepared === undefined) {
        const described = await this.db.execProtocol(
          concat([
            serialize.parse({ name, text: query.sql }),
            serialize.describe({ type: "S", name }),
            serialize.sync(),
          ]),
        );
        const description = described.messages.find(
          (m): m is messages.RowDescriptionMessage => m.name === "rowDescription",
        );
        prepared = {
          types: parse.parseDescribeStatementResults(described.messages),
          columns: description ? resultColumns(description) : undefined,
          notifies: false,
        };
        this.prepared.set(name, prepared);
      }
      const values = wireValues(this.db, prepared.types, query.parameters);
      // No `Describe` of the portal: the statement's row description, known since it was prepared,
      // stands in for it (a result type that changed under a prepared statement fails with 0A000,
      // handled above). And the answer is read from its bytes (`readRaw`), not from the messages
      // of PGlite's protocol parser, which costs more than the key lookup it parses the answer of.
      const message = bindExecuteSync(name, values);
      const syncToFs = this.db.fs?.syncToFs !== BUILTIN_SYNC;
      if (prepared.notifies) {
        // A statement that sent notifications before goes through PGlite's parser, which hands
        // them to its listeners (and throws the statement's error).
        const { data } = await this.db.execProtocol(message, { syncToFs });
        const result = readRaw<R>(
          this.db,
          prepared.columns,
          Buffer.from(data.buffer, data.byteOffset, data.byteLength),
        );
        return { rows: result.rows, numAffectedRows: BigInt(result.affectedRows) };
      }
      const chunks: Buffer[] = [];
      await this.db.execProtocolRawStream(message, {
        syncToFs,
        onRawData: (data) => {
          chunks.push(Buffer.from(data)); // a copy: the view is into PGlite's memory
        },
      });
      const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      const result = readRaw<R>(this.db, prepared.columns, bytes);
      if (result.failed)
        throw databaseError(bytes) ?? new Error("PGlite reported an error it did not describe.");
      if (result.notifications.length > 0) {
        // Nothing but this read saw them: PGlite's listeners get them from the same notifications
        // sent again through PGlite's parser, and the statement goes through it from now on.
        prepared.notifies = true;
        await this.renotify(result.notifications);
      }
      return { rows: result.rows, numAffectedRows: BigInt(result.affectedRows) };
    });
  }

  /** Sends `notifications` again, inside `runExclusive`, so PGlite delivers them to its listeners. */
  private async renotify(notifications: readonly (readonly [string, string])[]): Promise<void> {
    await this.db.execProtocol(
      concat([
        serialize.parse({ text: RENOTIFY }),
        serialize.bind({
          values: [
            `{${notifications.map(([c]) => arrayItem(c)).join(",")}}`,
            `{${notifications.map(([, p]) => arrayItem(p)).join(",")}}`,
          ],
        }),
        serialize.execute({}),
        serialize.sync(),
      ]),
    );
  }

  // biome-ignore lint/correctness/useYield: PGlite has no cursors; streaming is not offered.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("PGlite does not support streaming queries.");
  }
}
