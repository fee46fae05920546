import { randomBytes } from "node:crypto";
import { type PGlite, parse, protocol } from "@electric-sql/pglite";
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
import { isStalePlan, StatementNames } from "./prepared-pool.js";

/**
 * A Kysely dialect over one embedded PGlite database. PGlite is a single connection, so the
 * driver hands it to one holder at a time: a transaction keeps it from `BEGIN` to `COMMIT`, and
 * every other query waits its turn instead of landing inside someone else's transaction.
 *
 * Statements with parameters run as named prepared statements over PGlite's wire-protocol entry
 * (`execProtocol`, inside `runExclusive` so nothing else of PGlite's interleaves): parsed and
 * planned once, then one bind-and-execute per call. `PGlite.query` parses and plans every call,
 * which for the store's long CTE statements costs several times their execution.
 */
export class PGliteDialect implements Dialect {
  constructor(private readonly db: PGlite) {}

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

class PGliteConnection implements DatabaseConnection {
  release: (() => void) | undefined;
  private readonly names = new StatementNames(`openrath_${randomBytes(4).toString("hex")}`);
  /** Parameter type oids of each prepared statement, by name. */
  private readonly prepared = new Map<string, readonly number[]>();

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
      let types = this.prepared.get(name);
      if (types === undefined) {
        const described = await this.db.execProtocol(
          concat([
            serialize.parse({ name, text: query.sql }),
            serialize.describe({ type: "S", name }),
            serialize.sync(),
          ]),
        );
        types = parse.parseDescribeStatementResults(described.messages);
        this.prepared.set(name, types);
      }
      const values = query.parameters.map((value, i) => {
        if (value === null || value === undefined) return null;
        const serializer = this.db.serializers[types[i]!];
        return serializer ? serializer(value) : String(value);
      });
      const result = await this.db.execProtocol(
        concat([
          serialize.bind({ statement: name, values }),
          serialize.describe({ type: "P" }),
          serialize.execute({}),
          serialize.sync(),
        ]),
      );
      const [parsed] = parse.parseResults(result.messages, this.db.parsers);
      return {
        rows: (parsed?.rows ?? []) as R[],
        ...(parsed?.affectedRows !== undefined ? { numAffectedRows: BigInt(parsed.affectedRows) } : {}),
      };
    });
  }

  // biome-ignore lint/correctness/useYield: PGlite has no cursors; streaming is not offered.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("PGlite does not support streaming queries.");
  }
}
