// Shared pieces of the durable benches: workflows, a store per driver, and size accounting.
import { randomBytes } from "node:crypto";
import { Session } from "@openrath/core";
import {
  createDurableRuntime,
  type DurableRuntime,
  defineWorkflow,
  type RunStoreV1,
  type WorkflowBuilder,
} from "@openrath/runtime-durable";
import { type PostgresStoreOptions, pgliteStore, postgresStore } from "@openrath/store-postgres";
import pg from "pg";

/** The PostgreSQL server the benches use (the test services' one, or a given one). */
export function benchPostgresUrl(): string {
  const url = process.env.OPENRATH_BENCH_POSTGRES_URL ?? process.env.OPENRATH_TEST_POSTGRES_URL;
  if (!url) {
    throw new Error(
      "Set OPENRATH_BENCH_POSTGRES_URL (or OPENRATH_TEST_POSTGRES_URL, which tooling/scripts/services.mjs sets) to a local PostgreSQL, e.g. postgres://postgres@127.0.0.1:5432/postgres.",
    );
  }
  return url;
}

/** A workflow of `steps` chained steps, each appending one small chunk. */
export function chain(name: string, steps: number): WorkflowBuilder {
  const flow = defineWorkflow(name);
  for (let i = 0; i < steps; i++) {
    flow.step(`s${i}`, (s) => s.append({ kind: "assistant", content: `step ${i}` }), {
      entry: i === 0,
      ...(i + 1 < steps ? { next: `s${i + 1}` } : {}),
    });
  }
  return flow;
}

/** Store options a bench case may set (both drivers). */
export type StoreOptions = Pick<PostgresStoreOptions, "stepDurability" | "onQuery">;

/** A fresh store on `driver`: a new schema on the server, or an in-memory PGlite. */
export async function freshStore(
  driver: "pglite" | "postgres",
  options: StoreOptions = {},
): Promise<{ store: RunStoreV1; schema: string }> {
  const schema = `bench_${randomBytes(5).toString("hex")}`;
  const store =
    driver === "pglite"
      ? await pgliteStore({ schema, ...options })
      : await postgresStore({
          ...options,
          connectionString: benchPostgresUrl(),
          schema,
          migrate: true,
          pool: { max: 20 },
        });
  return { store, schema };
}

/** A runtime on a fresh store (given `options`) with `flows` registered. */
export async function freshRuntime(
  driver: "pglite" | "postgres",
  flows: WorkflowBuilder | readonly WorkflowBuilder[],
  options: StoreOptions = {},
): Promise<{ runtime: DurableRuntime; schema: string }> {
  const { store, schema } = await freshStore(driver, options);
  const runtime = createDurableRuntime({ store });
  for (const flow of Array.isArray(flows) ? flows : [flows]) await runtime.register(flow);
  return { runtime, schema };
}

/** Total size (tables, indexes, TOAST) of every relation in `schema`, in bytes. */
export async function schemaBytes(url: string, schema: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("checkpoint").catch(() => {});
    const r = await client.query(
      `select coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint as bytes
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = $1 and c.relkind in ('r', 'm')`,
      [schema],
    );
    return Number(r.rows[0].bytes);
  } finally {
    await client.end();
  }
}

/** Incompressible text of about `bytes` characters (random base64). */
export function noise(bytes: number): string {
  return randomBytes(Math.ceil((bytes * 3) / 4))
    .toString("base64")
    .slice(0, bytes);
}

/** A session to start runs from. */
export const input = () => Session.fromUserMessage("bench");
