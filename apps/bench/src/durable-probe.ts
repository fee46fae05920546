// A profiling probe for the durable store, not a bench: statements per run and per step (by text,
// with their mean duration), storage per table (heap, indexes, live/dead rows, HOT updates, before
// and after VACUUM), ms per step and one-step-run throughput. The counts in docs/perf/ come from here.
//
//   node --conditions=@openrath/source --import tsx src/durable-probe.ts count
//   ... durable-probe.ts storage [turns] [runs,steps]
//   ... durable-probe.ts perstep [steps]          (ONLY=postgres-relaxed|postgres-strict|pglite-relaxed)
//   ... durable-probe.ts tput pglite|postgres [runs] [concurrency]
//
// Experiments (tried and not kept: docs/perf/2026-12-durable-throughput.md): GENERIC=1 forces generic plans (plan_cache_mode);
// NOFK=1 drops the PGlite store's foreign keys; ASYNC=1 turns synchronous_commit off on PGlite;
// AE=1 logs every statement's plan with auto_explain (analyze, buffers) to the server's log;
// ORDER=… sets the order of the perstep cases.
//   ... durable-probe.ts procs [runs]               (claim-index scans per run, 1/2/4 processes)

import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { Session } from "@openrath/core";
import { createDurableRuntime, defineWorkflow } from "@openrath/runtime-durable";
import { pgliteStore, postgresStore } from "@openrath/store-postgres";
import pg from "pg";
import { benchPostgresUrl, chain, input } from "./internal/durable-fixtures.js";

const url = benchPostgresUrl();
const counts = new Map<string, number>();
let total = 0;
const durs = new Map<string, number>();
const onQuery = (e: { sql: string; durationMs: number }) => {
  total++;
  const key = e.sql.replace(/\s+/g, " ").slice(0, 90);
  counts.set(key, (counts.get(key) ?? 0) + 1);
  durs.set(key, (durs.get(key) ?? 0) + e.durationMs);
};
function dump(label: string, per: number) {
  console.log(`== ${label}: ${total} statements, ${(total / per).toFixed(2)} per unit`);
  for (const [k, v] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, 12))
    console.log(`  ${(v / per).toFixed(2)} ${((durs.get(k) ?? 0) / v).toFixed(3)}ms  ${k}`);
  counts.clear();
  durs.clear();
  total = 0;
}
async function store(driver: string, schema: string) {
  if (driver === "pglite" && process.env.NOFK) {
    // Experiment: the same store without its foreign keys (what the RI triggers cost per statement).
    const { PGlite } = await import("@electric-sql/pglite");
    const db = await PGlite.create();
    (await pgliteStore({ schema, db })).close();
    const fks = await db.query<{ t: string; c: string }>(
      `select conrelid::regclass::text as t, conname as c from pg_constraint where contype = 'f' and connamespace = $1::regnamespace`,
      [schema],
    );
    for (const fk of fks.rows) await db.exec(`alter table ${fk.t} drop constraint ${fk.c}`);
    return pgliteStore({ schema, onQuery, db });
  }
  if (driver === "pglite" && (process.env.GENERIC || process.env.ASYNC)) {
    const { PGlite } = await import("@electric-sql/pglite");
    const db = await PGlite.create();
    if (process.env.GENERIC) await db.exec("set plan_cache_mode = force_generic_plan");
    if (process.env.ASYNC) await db.exec("set synchronous_commit = off");
    return pgliteStore({ schema, onQuery, db });
  }
  return driver === "pglite"
    ? pgliteStore({ schema, onQuery })
    : postgresStore({
        connectionString: url,
        schema,
        migrate: true,
        pool: {
          max: 20,
          ...(process.env.GENERIC ? { options: "-c plan_cache_mode=force_generic_plan" } : {}),
        },
        onQuery,
      });
}
const mode = process.argv[2] ?? "count";
if (mode === "count") {
  for (const driver of ["pglite", "postgres"]) {
    const s = await store(driver, `probe_${randomBytes(4).toString("hex")}`);
    const rt = createDurableRuntime({ store: s });
    await rt.register(chain("one", 1));
    await rt.register(chain("chain", 50));
    const w = rt.worker({ concurrency: 1, leaseMs: 30_000 });
    await w.start();
    await rt.wait((await rt.submit("one", input())).id);
    counts.clear();
    total = 0;
    for (let i = 0; i < 20; i++) await rt.wait((await rt.submit("one", input())).id);
    dump(`${driver} one-step run, sequential`, 20);
    await rt.wait((await rt.submit("chain", input())).id);
    dump(`${driver} 50-step run`, 50);
    await w.stop();
    await s.close();
  }
}
if (mode === "storage") {
  const message = (i: number, role: string) => {
    let out = "";
    for (let k = 0; out.length < 115; k++)
      out += createHash("sha256").update(`${role}:${i}:${k}`).digest("base64");
    return out.slice(0, 115);
  };
  const TURNS = Number(process.argv[3] ?? 400);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  type Sizes = Map<string, { heap: number; idx: number; other: number }>;
  const sizes = async (schema: string): Promise<Sizes> => {
    await client.query("checkpoint");
    const r = await client.query(
      `select c.relname, pg_relation_size(c.oid) as heap, pg_indexes_size(c.oid) as idx, pg_total_relation_size(c.oid) as total
       from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = $1 and c.relkind = 'r'`,
      [schema],
    );
    return new Map(
      r.rows.map((row) => [
        row.relname as string,
        {
          heap: Number(row.heap),
          idx: Number(row.idx),
          other: Number(row.total) - Number(row.heap) - Number(row.idx),
        },
      ]),
    );
  };
  // Growth per table since `before` (the warm-up), as the bench counts it (heap, indexes, and the
  // rest of pg_total_relation_size: free-space map, TOAST), in bytes per unit (run or step).
  const growth = (label: string, before: Sizes, after: Sizes, units: number) => {
    console.log(
      `== ${label}: growth since the warm-up, bytes per ${units} units and per unit (heap / indexes / fsm+toast)`,
    );
    let sum = 0;
    for (const [name, a] of [...after].sort((x, y) => y[1].heap + y[1].idx - x[1].heap - x[1].idx)) {
      const b = before.get(name) ?? { heap: 0, idx: 0, other: 0 };
      const d = { heap: a.heap - b.heap, idx: a.idx - b.idx, other: a.other - b.other };
      const total = d.heap + d.idx + d.other;
      sum += total;
      if (total === 0) continue;
      const per = (n: number) => (n / units).toFixed(0);
      console.log(
        `  ${name.padEnd(22)} ${String(total).padStart(7)}  per unit ${per(total).padStart(5)} (${per(d.heap)} / ${per(d.idx)} / ${per(d.other)})`,
      );
    }
    console.log(
      `  SUM ${sum} = ${(sum / (TURNS * 230)).toFixed(2)}x content, ${(sum / units).toFixed(0)} per unit`,
    );
  };
  const breakdown = async (schema: string, label: string) => {
    const r = await client.query(
      `select c.relname, pg_relation_size(c.oid) as heap, pg_indexes_size(c.oid) as idx, pg_total_relation_size(c.oid) as total,
        (select n_dead_tup from pg_stat_user_tables t where t.relid = c.oid) as dead, (select n_live_tup from pg_stat_user_tables t where t.relid = c.oid) as live, (select n_tup_upd||'/'||n_tup_hot_upd from pg_stat_user_tables t where t.relid = c.oid) as upd
       from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = $1 and c.relkind = 'r' order by total desc`,
      [schema],
    );
    let sum = 0;
    console.log(`== ${label}`);
    for (const row of r.rows) {
      sum += Number(row.total);
      console.log(
        `  ${row.relname.padEnd(22)} heap ${row.heap} idx ${row.idx} total ${row.total} live ${row.live} dead ${row.dead} upd/hot ${row.upd}`,
      );
    }
    console.log(`  SUM ${sum} = ${(sum / (TURNS * 230)).toFixed(2)}x`);
  };
  for (const kind of (process.argv[4] ?? "runs,steps").split(",")) {
    const schema = `probe_${randomBytes(4).toString("hex")}`;
    const s = await store("postgres", schema);
    const rt = createDurableRuntime({ store: s });
    const turn = defineWorkflow("turn").step(
      "reply",
      (x, ctx) => {
        const i = Number(ctx.metadata.turn);
        return x.append(
          { kind: "user", content: message(i, "user") },
          { kind: "assistant", content: message(i, "assistant") },
        );
      },
      { entry: true },
    );
    const long = defineWorkflow("long");
    for (let i = 0; i < TURNS; i++)
      long.step(
        `t${i}`,
        (x) =>
          x.append(
            { kind: "user", content: message(i, "user") },
            { kind: "assistant", content: message(i, "assistant") },
          ),
        { entry: i === 0, ...(i + 1 < TURNS ? { next: `t${i + 1}` } : {}) },
      );
    const warm = defineWorkflow("warm").step(
      "t0",
      (x) => x.append({ kind: "user", content: message(0, "warm") }),
      {
        entry: true,
      },
    );
    await rt.register(turn);
    await rt.register(long);
    await rt.register(warm);
    await breakdown(schema, "empty");
    const w = rt.worker({ concurrency: 1, leaseMs: 30_000 });
    await w.start();
    // The bench's warm-up: every table and index has its first pages before the growth is counted.
    if (kind === "runs")
      await rt.result(
        (await rt.submit("turn", Session.fromUserMessage("warm-up"), { metadata: { turn: 0 } })).id,
      );
    else await rt.wait((await rt.submit("warm", Session.fromUserMessage("warm-up"))).id);
    const warmed = await sizes(schema);
    if (kind === "runs") {
      let session = Session.fromUserMessage("start");
      for (let i = 0; i < TURNS; i++) {
        const run = await rt.submit("turn", session, { metadata: { turn: i } });
        session = await rt.result(run.id);
      }
    } else await rt.wait((await rt.submit("long", Session.fromUserMessage("start"))).id);
    await w.stop();
    await client.query("checkpoint");
    await breakdown(schema, `${kind} after`);
    growth(kind, warmed, await sizes(schema), TURNS);
    await client.query(
      `vacuum ${schema}.runs, ${schema}.run_events, ${schema}.checkpoints, ${schema}.session_heads`,
    );
    await breakdown(schema, `${kind} after vacuum`);
    await s.close();
  }
  await client.end();
}
if (mode === "perstep") {
  const steps = Number(process.argv[3] ?? 200);
  const order = (process.env.ORDER ?? "postgres-strict,postgres-relaxed,pglite-relaxed").split(",");
  for (const [driver, dur] of order
    .map((name) => name.split("-") as ["postgres" | "pglite", "strict" | "relaxed"])
    .filter(([d, x]) => !process.env.ONLY || process.env.ONLY === `${d}-${x}`)) {
    const schema = `probe_${randomBytes(4).toString("hex")}`;
    const s =
      driver === "pglite"
        ? await pgliteStore({ schema })
        : await postgresStore({
            connectionString: url,
            schema,
            migrate: true,
            pool: {
              max: 20,
              ...(process.env.GENERIC ? { options: "-c plan_cache_mode=force_generic_plan" } : {}),
              ...(process.env.AE
                ? {
                    options:
                      "-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=0 -c auto_explain.log_analyze=on -c auto_explain.log_buffers=on -c auto_explain.log_nested_statements=off",
                  }
                : {}),
            },
            stepDurability: dur,
            onQuery,
          });
    const rt = createDurableRuntime({ store: s });
    await rt.register(chain("chain", steps));
    const w = rt.worker({ concurrency: 1, leaseMs: 30_000 });
    await w.start();
    const samples: number[] = [];
    const walClient = new pg.Client({ connectionString: url });
    await walClient.connect();
    const syncs = async () =>
      Number((await walClient.query("select wal_sync from pg_stat_wal")).rows[0].wal_sync);
    const syncsBefore = await syncs();
    for (let r = 0; r < 4; r++) {
      const t = performance.now();
      await rt.wait((await rt.submit("chain", input())).id);
      if (r > 0) samples.push((performance.now() - t) / steps);
    }
    samples.sort((a, b) => a - b);
    console.log(
      driver,
      dur,
      "ms/step",
      samples.map((x) => x.toFixed(3)).join(" "),
      `WAL syncs per step (server-wide) ${((await syncs()) - syncsBefore) / (4 * steps)}`,
    );
    await walClient.end();
    dump("perstep", 4 * steps);
    await w.stop();
    await s.close();
  }
}
/**
 * CPU time (ms) so far of the PostgreSQL server: all of its processes (backends, the WAL writer,
 * the listener's backend...), children of the postmaster; and its commits (`xact_commit`).
 */
async function serverUsage(): Promise<{ cpuMs: number; commits: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const dir = await client.query<{ setting: string }>(
    "select setting from pg_settings where name = 'data_directory'",
  );
  const stats = await client.query<{ n: string }>(
    "select pg_stat_force_next_flush(), (select xact_commit from pg_stat_database where datname = current_database()) as n",
  );
  await client.end();
  const postmaster = Number(readFileSync(`${dir.rows[0]!.setting}/postmaster.pid`, "utf8").split("\n")[0]);
  let ticks = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(entry) === postmaster || Number(fields[1]) === postmaster)
        ticks += Number(fields[11]) + Number(fields[12]);
    } catch {}
  }
  return { cpuMs: ticks * 10, commits: Number(stats.rows[0]!.n) }; // USER_HZ = 100
}
if (mode === "tput") {
  const driver = process.argv[3] ?? "pglite";
  const n = Number(process.argv[4] ?? 1000);
  const conc = Number(process.argv[5] ?? 16);
  const schema = `probe_${randomBytes(4).toString("hex")}`;
  const s = await store(driver, schema);
  const rt = createDurableRuntime({ store: s });
  await rt.register(chain("one", 1));
  const w = rt.worker({ concurrency: driver === "pglite" ? 8 : conc, leaseMs: 30_000 });
  await w.start();
  // Warm-up (WARM runs, default 1): PGlite's WebAssembly is compiled to optimised code in the
  // background during its first seconds, on the same two cores.
  for (let i = 0; i < Number(process.env.WARM ?? 1); i++) await rt.wait((await rt.submit("one", input())).id);
  counts.clear();
  total = 0;
  const cpu = process.cpuUsage();
  const server = driver === "postgres" ? await serverUsage() : undefined;
  const t = performance.now();
  if (driver === "pglite") {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push((await rt.submit("one", input())).id);
    await Promise.all(ids.map((id) => rt.wait(id)));
  } else {
    let left = n;
    await Promise.all(
      Array.from({ length: conc }, async () => {
        while (left-- > 0) await rt.wait((await rt.submit("one", input())).id);
      }),
    );
  }
  const ms = performance.now() - t;
  const used = process.cpuUsage(cpu);
  const after = server ? await serverUsage() : undefined;
  console.log(
    driver,
    "runs/s",
    ((n / ms) * 1000).toFixed(1),
    "| CPU ms per run: this process",
    ((used.user + used.system) / 1000 / n).toFixed(3),
    server && after
      ? `, the PostgreSQL server ${((after.cpuMs - server.cpuMs) / n).toFixed(3)} | commits per run ${((after.commits - server.commits - 1) / n).toFixed(2)}`
      : "",
  );
  dump(`${driver} tput`, n);
  await w.stop();
  await s.close();
}
if (mode === "procs") {
  // Claims per run with 1, 2 and 4 worker processes: index scans of the claim index per run.
  const { spawn } = await import("node:child_process");
  const n = Number(process.argv[3] ?? 1000);
  for (const processes of [1, 2, 4]) {
    const schema = `probe_${randomBytes(4).toString("hex")}`;
    const s = await postgresStore({ connectionString: url, schema, migrate: true, pool: { max: 20 } });
    const rt = createDurableRuntime({ store: s });
    const children = Array.from({ length: processes }, (_, i) =>
      spawn(
        process.execPath,
        [
          "--conditions=@openrath/source",
          "--import",
          "tsx",
          "src/internal/durable-worker.ts",
          url,
          schema,
          `p${i}`,
          "16",
          "5000",
        ],
        { stdio: ["ignore", "pipe", "inherit"] },
      ),
    );
    const hashes = await Promise.all(
      children.map(
        (child) =>
          new Promise<string>((resolve) =>
            child.stdout!.on("data", (d) => {
              const m = /one=(\w+)/.exec(String(d));
              if (m) resolve(m[1]!);
            }),
          ),
      ),
    );
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const scans = async () =>
      Number(
        (
          await client.query(
            `select coalesce(sum(idx_scan), 0) as n from pg_stat_user_indexes where schemaname = $1 and indexrelname = 'runs_claim'`,
            [schema],
          )
        ).rows[0].n,
      );
    await new Promise((r) => setTimeout(r, 700));
    const before = await scans();
    const t = performance.now();
    let left = n;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (left-- > 0) await rt.wait((await rt.submit(hashes[0]!, input())).id);
      }),
    );
    const ms = performance.now() - t;
    await new Promise((r) => setTimeout(r, 700));
    console.log(
      `${processes} process(es): ${((n / ms) * 1000).toFixed(1)} runs/s, claim-index scans per run ${((await scans()) - before) / n}`,
    );
    await client.end();
    for (const child of children) child.kill("SIGKILL");
    await s.close();
  }
}
