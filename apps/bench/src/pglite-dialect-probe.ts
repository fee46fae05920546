// A profiling probe for the PGlite dialect, not a bench: what one primary-key lookup of a `runs`
// row costs at each layer, from PGlite's synchronous wire-protocol call up to the store's own
// statement through Kysely, so the dialect's overhead per statement can be told from PostgreSQL's
// execution. ADR 0018's "PGlite per-statement cost" section comes from here.
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
  await db.execProtocol(
    new Uint8Array([
      ...serialize.parse({ name: "p1", text }),
      ...serialize.describe({ type: "S", name: "p1" }),
      ...serialize.sync(),
    ]),
  );
  const bindExec = () =>
    new Uint8Array([
      ...serialize.bind({ statement: "p1", values: [id] }),
      ...serialize.describe({ type: "P" }),
      ...serialize.execute({}),
      ...serialize.sync(),
    ]);
  const message = bindExec();
  await db.execProtocol(
    new Uint8Array([
      ...serialize.parse({ name: "p0", text: "select $1::int as x" }),
      ...serialize.describe({ type: "S", name: "p0" }),
      ...serialize.sync(),
    ]),
  );
  const trivial = new Uint8Array([
    ...serialize.bind({ statement: "p0", values: ["1"] }),
    ...serialize.describe({ type: "P" }),
    ...serialize.execute({}),
    ...serialize.sync(),
  ]);
  time("execProtocolRawSync, prepared `select $1::int` (the floor)", () => db.execProtocolRawSync(trivial));
  console.log(`PGlite 0.5, ${N} lookups of one runs row by primary key, in memory (us per lookup)`);
  time("execProtocolRawSync, message built once", () => db.execProtocolRawSync(message));
  time("execProtocolRaw (syncToFs: false)", () => db.execProtocolRaw(message, { syncToFs: false }));
  time("execProtocolRaw (default: syncToFs)", () => db.execProtocolRaw(message));
  time("execProtocol (syncToFs: false), parsed messages", () =>
    db.execProtocol(message, { syncToFs: false }),
  );
  time("execProtocol (default)", () => db.execProtocol(message));
  time("execProtocol (default) + serialize each call", () => db.execProtocol(bindExec()));
  time("  + parseResults", async () => {
    const r = await db.execProtocol(bindExec());
    return parse.parseResults(r.messages, db.parsers);
  });
  time("  + runExclusive", () =>
    db.runExclusive(async () => {
      const r = await db.execProtocol(bindExec());
      return parse.parseResults(r.messages, db.parsers);
    }),
  );
  time("PGlite.query (parse and plan every call)", () => db.query(text, [id]));

  const compiled = CompiledQuery.raw(text, [id]);
  time("Kysely executeQuery(CompiledQuery) via PGliteDialect", () => k.executeQuery(compiled));
  const runs = sql.table(`${schema}.runs`);
  time("Kysely sql`` template, compiled each call (the store's way)", () =>
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
