import { createHash } from "node:crypto";
import type { PostgresPool, PostgresPoolClient } from "kysely";
import type pg from "pg";

/** Statement texts given a name at most; beyond it, new texts run unnamed (the set is finite in practice). */
const MAX_NAMED = 512;

/**
 * Names for statement texts: one per distinct text (a digest), and a generation bumped when the
 * server reports a cached plan that no longer fits (a column added under a running worker), so
 * every connection prepares afresh under new names.
 */
export class StatementNames {
  private readonly names = new Map<string, string>();
  private generation = 0;

  /** `prefix` keeps two users of one database session (two stores over one PGlite) apart. */
  constructor(private readonly prefix = "openrath") {}

  /** The name for `text`, or `undefined` when it is not to be prepared. */
  nameOf(text: string): string | undefined {
    const known = this.names.get(text);
    if (known !== undefined) return known;
    if (this.names.size >= MAX_NAMED) return undefined;
    const name = `${this.prefix}_${this.generation}_${createHash("sha1").update(text).digest("hex").slice(0, 20)}`;
    this.names.set(text, name);
    return name;
  }

  /** Forgets every name: the next executions prepare under new ones. */
  reset(): void {
    this.generation++;
    this.names.clear();
  }
}

/** Whether `error` is PostgreSQL's "cached plan must not change result type" (feature_not_supported). */
export function isStalePlan(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown };
  return e?.code === "0A000" && /cached plan must not change result type/i.test(String(e.message ?? ""));
}

/**
 * Whether `error` ended the connection it came on (the server terminated the session, or the
 * socket closed): such a client goes back to the pool only to be destroyed, or the next query on
 * it would fail too.
 */
function endsConnection(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown };
  return (
    (typeof e?.code === "string" && /^57P0[123]$/.test(e.code)) ||
    /Connection terminated|connection is closed/i.test(String(e?.message ?? ""))
  );
}

/**
 * A `pg` pool seen by Kysely with prepared statements: every statement with parameters runs as a
 * named statement, so each connection parses and plans it once and then only binds and executes
 * (the store's statements are long data-modifying CTEs whose planning costs more than their
 * execution). Statements without parameters (migrations, `begin`, `commit`) run as they are.
 *
 * A prepared statement whose result type changed under it (a migration added a column to a table
 * it reads with `*`) fails once with `0A000`; names are then renewed, and outside a transaction the
 * statement is sent again at once.
 */
export function preparedPool(pool: pg.Pool): PostgresPool {
  const names = new StatementNames();
  const clients = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    let inTransaction = false;
    let broken = false;
    const run = (text: string, values: unknown[]) => {
      const name = values.length > 0 ? names.nameOf(text) : undefined;
      return name === undefined ? client.query(text, values) : client.query({ name, text, values });
    };
    const query = async (text: string, parameters: readonly unknown[]) => {
      const values = [...parameters];
      if (values.length === 0) {
        const verb = text.trimStart().slice(0, 8).toLowerCase();
        if (verb.startsWith("begin") || verb.startsWith("start")) inTransaction = true;
        else if (verb.startsWith("commit") || verb.startsWith("rollback")) inTransaction = false;
      }
      try {
        return await run(text, values);
      } catch (error) {
        if (endsConnection(error)) broken = true;
        if (!isStalePlan(error)) throw error;
        names.reset();
        if (inTransaction) throw error;
        return await run(text, values);
      }
    };
    return {
      query: query as unknown as PostgresPoolClient["query"],
      release: (destroy?: boolean) => {
        inTransaction = false;
        client.release(destroy || broken);
      },
    };
  };
  return {
    async connect() {
      const client = await pool.connect();
      let wrapped = clients.get(client);
      if (!wrapped) {
        wrapped = wrap(client);
        clients.set(client, wrapped);
      }
      return wrapped;
    },
    end: () => pool.end(),
  };
}
