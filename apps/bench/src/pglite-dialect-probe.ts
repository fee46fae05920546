// A profiling probe for the PGlite dialect, not a bench: what one primary-key lookup of a `runs`
// row costs at each layer, from PostgreSQL's execution inside PGlite's WebAssembly up to the store's
// own statement through Kysely, so the dialect's overhead per statement can be told from the
// query's. docs/perf/2026-12-pglite-per-statement.md (ADR 0018, decision 10) comes from here.
//
//   node --conditions=@openrath/source --import tsx src/pglite-dialect-probe.ts layers [iterations]
//   ... pglite-dialect-probe.ts tput [runs] [profile.cpuprofile]
//       one-step runs on an in-memory pgliteStore as durable-probe's tput, with a CPU profile of
//       the measured window only (no start-up, no migrations) when a file is named

import { randomBytes, randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { Session as Inspector } from "node:inspector/promises";
import { PGlite, parse, protocol } from "@electric-sql/pglite";
import { createDurableRuntime } from "@openrath/runtime-durable";
import { migrate, PGliteDialect, pgliteStore } from "@openrath/store-postgres";
import { CompiledQuery, Kysely, sql } from "kysely";
import { chain, input } from "./internal/durable-fixtures.js";

const mode = process.argv[2] ?? "layers";
if (mode === "layers") await layers(Number(process.argv[3] ?? 3000));
if (mode === "tput") await tput(Number(process.argv[3] ?? 1000), process.argv[4]);

async function layers(N: number): Promise<void> {
  const schema = `probe_${randomBytes(4).toString("hex")}`;
  const db = await PGlite.create();
  const k = new Kysely({ dialect: new PGliteDialect(db) });
  await migrate(k, schema);

  // One run row to look up (the columns the store reads for a RunRecord).
  const id = randomUUID();
  await db.query(
    `insert into ${schema}.plans (hash, name, version, definition) values ('h', 'one', '1', '{}') on conflict do nothing`,
  );
  await db.query(
    `insert into ${schema}.runs (id, tenant_id, session_id, plan_hash, workflow, status, fingerprint)
   values ($1, 't', 's', 'h', 'one', 'queued', 'f')`,
    [id],
  );
  const columns =
    "id, tenant_id, session_id, plan_hash, workflow, status, version, priority, idempotency_key, fingerprint, next_step, attempt, not_before, deadline, lease_holder, fencing_token, lease_expires_at, checkpoint_seq, checkpoint_id, event_seq, error, metadata, created_at, updated_at, crashes";
  const text = `select ${columns} from ${schema}.runs where id = $1`;

  const cases: [string, () => unknown][] = [];
  /** Registers a case; every case runs in each of several rounds, interleaved, and reports its median. */
  function time(label: string, fn: () => unknown): void {
    cases.push([label, fn]);
  }
  async function runCases(rounds = 5): Promise<void> {
    const per = new Map<string, number[]>();
    for (let r = 0; r < rounds; r++)
      for (const [label, fn] of cases) {
        for (let i = 0; i < Math.min(200, N); i++) await fn();
        const t = performance.now();
        for (let i = 0; i < N; i++) await fn();
        per.set(label, [...(per.get(label) ?? []), ((performance.now() - t) / N) * 1000]);
      }
    for (const [label] of cases) {
      const us = (per.get(label) ?? []).sort((a, b) => a - b);
      console.log(
        `${label.padEnd(62)} ${us[us.length >> 1]!.toFixed(1).padStart(7)} us  (min ${us[0]!.toFixed(1)})`,
      );
    }
  }

  const { serialize } = protocol;
  const prepare = (name: string, statement: string) =>
    db.execProtocol(
      new Uint8Array([
        ...serialize.parse({ name, text: statement }),
        ...serialize.describe({ type: "S", name }),
        ...serialize.sync(),
      ]),
    );
  const call = (name: string, values: string[], describe: boolean) =>
    new Uint8Array([
      ...serialize.bind({ statement: name, values }),
      ...(describe ? serialize.describe({ type: "P" }) : []),
      ...serialize.execute({}),
      ...serialize.sync(),
    ]);
  await prepare("p0", "select $1::int as x");
  await prepare("p1", text);
  const floor = call("p0", ["1"], false);
  const described = call("p1", [id], true);
  const bare = call("p1", [id], false);
  // PostgreSQL alone: the raw stream hands the bytes over without PGlite parsing them.
  const raw = (m: Uint8Array) => db.execProtocolRawStream(m, { syncToFs: false, onRawData: () => {} });
  console.log(
    `PGlite 0.5, one runs row by primary key (25 columns), in memory: us per statement, median of 5`,
  );
  time("wasm only: prepared `select $1::int` (the floor)", () => raw(floor));
  time("wasm only: the lookup, with Describe of the portal", () => raw(described));
  time("wasm only: the lookup, without", () => raw(bare));
  time("execProtocol (PGlite parses the messages), with Describe", () => db.execProtocol(described));
  time("execProtocol, without Describe", () => db.execProtocol(bare));
  time("execProtocol, without Describe, syncToFs: false", () => db.execProtocol(bare, { syncToFs: false }));
  // What the dialect did before: runExclusive, serialize, Describe, execProtocol, parseResults.
  time("the dialect's old path, without Kysely", () =>
    db.runExclusive(async () => {
      const r = await db.execProtocol(call("p1", [id], true));
      return parse.parseResults(r.messages, db.parsers);
    }),
  );
  time("PGlite.query (parses and plans every call)", () => db.query(text, [id]));

  const compiled = CompiledQuery.raw(text, [id]);
  time("Kysely executeQuery(CompiledQuery) through PGliteDialect (now)", () => k.executeQuery(compiled));
  const runs = sql.table(`${schema}.runs`);
  time("  + a sql`` template compiled each call (the store's way)", () =>
    sql`select ${sql.raw(columns)} from ${runs} where id = ${id}`.execute(k),
  );
  await runCases();
  await k.destroy();
  await db.close();
}

async function tput(n: number, profile: string | undefined): Promise<void> {
  const store = await pgliteStore({ schema: `probe_${randomBytes(4).toString("hex")}` });
  const rt = createDurableRuntime({ store });
  await rt.register(chain("one", 1));
  const w = rt.worker({ concurrency: 8, leaseMs: 30_000 });
  await w.start();
  for (let i = 0; i < 50; i++) await rt.wait((await rt.submit("one", input())).id);
  const inspector = new Inspector();
  if (profile) {
    inspector.connect();
    await inspector.post("Profiler.enable");
    await inspector.post("Profiler.setSamplingInterval", { interval: 200 });
    await inspector.post("Profiler.start");
  }
  const cpu = process.cpuUsage();
  const t = performance.now();
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await rt.submit("one", input())).id);
  await Promise.all(ids.map((id) => rt.wait(id)));
  const ms = performance.now() - t;
  const used = process.cpuUsage(cpu);
  if (profile) {
    const { profile: data } = await inspector.post("Profiler.stop");
    writeFileSync(profile, JSON.stringify(data));
    inspector.disconnect();
  }
  const cpuPerRun = (used.user + used.system) / 1000 / n;
  console.log(`pglite runs/s ${((n / ms) * 1000).toFixed(1)}, CPU ${cpuPerRun.toFixed(3)} ms per run`);
  await w.stop();
  await store.close();
}
