// The durable runtime, side by side with DBOS Transact and LangGraph.js's PostgresSaver on the same
// local PostgreSQL: per-step overhead, storage after a 400-turn conversation, one-step-run
// throughput (embedded, server sequential and at concurrency 16, 1/2/4 worker processes), and the
// time from a worker's restart after kill -9 to its runs moving again.
//
//   OPENRATH_BENCH_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/postgres pnpm --filter @openrath/bench run bench:durable
//
// One JSON line per case on stdout; progress on stderr.
import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { Session } from "@openrath/core";
import { createDurableRuntime, defineWorkflow } from "@openrath/runtime-durable";
import pg from "pg";
import { bundleInternal } from "./internal/bundle.js";
import {
  langGraphChain,
  langGraphConversation,
  launchDbos,
  runDbosChain,
  runDbosConversation,
} from "./internal/durable-anchors.js";
import {
  benchPostgresUrl,
  chain,
  freshRuntime,
  freshStore,
  input,
  schemaBytes,
} from "./internal/durable-fixtures.js";
import { emit, median, progressFor, round } from "./internal/report.js";

const progress = progressFor("durable");
const url = benchPostgresUrl();
const quick = process.env.OPENRATH_BENCH_QUICK === "1";
const STEPS = quick ? 50 : 200;
const TURNS = 400;
const MESSAGE_BYTES = 115;

/** Incompressible message text for turn `i` (hash output, base64): the same bytes for every system. */
function message(i: number, role: string): string {
  let out = "";
  for (let k = 0; out.length < MESSAGE_BYTES; k++)
    out += createHash("sha256").update(`${role}:${i}:${k}`).digest("base64");
  return out.slice(0, MESSAGE_BYTES);
}
const conversation = Array.from({ length: TURNS }, (_, i) => [message(i, "user"), message(i, "assistant")]);
const contentBytes = TURNS * 2 * MESSAGE_BYTES;

async function timed<T>(fn: () => Promise<T>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

async function stepOverhead() {
  // Every system runs one chain per round, in turn, so a change of the machine's load during the
  // case falls on all of them alike; the first round (warm-up) is dropped, the median kept.
  const systems: { name: string; run: () => Promise<unknown>; close: () => Promise<void> }[] = [];
  for (const [driver, durability] of [
    ["pglite", "relaxed"],
    ["postgres", "relaxed"],
    ["postgres", "strict"],
  ] as const) {
    const { runtime } = await freshRuntime(driver, chain("chain", STEPS), { stepDurability: durability });
    const worker = runtime.worker({ concurrency: 1, leaseMs: 30_000 });
    await worker.start();
    systems.push({
      name: `openrath-${driver}${driver === "postgres" && durability === "strict" ? " (strict step commits)" : ""}`,
      run: async () => runtime.wait((await runtime.submit("chain", input())).id),
      close: async () => {
        await worker.stop();
        await runtime.store.close();
      },
    });
  }
  const dbos = await launchDbos(url);
  systems.push({ name: "dbos", run: () => runDbosChain(STEPS), close: async () => {} });
  const lg = await langGraphChain(url, `lg_${Date.now()}`);
  systems.push({ name: "langgraph", run: () => lg.run(STEPS), close: () => lg.close() });
  const samples = new Map<string, number[]>(systems.map((s) => [s.name, []]));
  const rounds = quick ? 4 : 8;
  for (let r = 0; r < rounds; r++) {
    progress(`per-step: round ${r + 1} of ${rounds}`);
    for (const system of systems) {
      const ms = await timed(system.run);
      if (r > 0) samples.get(system.name)!.push(ms / STEPS);
    }
  }
  for (const system of systems) await system.close();
  const results: Record<string, number> = Object.fromEntries(
    [...samples].map(([name, values]) => [name, median(values)]),
  );
  for (const [system, ms] of Object.entries(results))
    emit({ bench: "durable.per-step", system, steps: STEPS, msPerStep: round(ms) });
  emit({
    bench: "durable.per-step.ratio",
    openrathPostgresVsDbos: round(results["openrath-postgres"]! / results.dbos!),
    openrathPostgresStrictVsDbos: round(results["openrath-postgres (strict step commits)"]! / results.dbos!),
    openrathPostgresVsLanggraph: round(results["openrath-postgres"]! / results.langgraph!),
    targetMsPerStep: 0.8,
  });
  return dbos;
}

/** A workflow `name` of `turns` steps, step `i` appending turn `i` of the conversation. */
function conversationFlow(name: string, turns: number) {
  const flow = defineWorkflow(name);
  for (let i = 0; i < turns; i++) {
    flow.step(
      `t${i}`,
      (s) =>
        s.append(
          { kind: "user", content: message(i, "user") },
          { kind: "assistant", content: message(i, "assistant") },
        ),
      { entry: i === 0, ...(i + 1 < turns ? { next: `t${i + 1}` } : {}) },
    );
  }
  return flow;
}

// Storage is measured as the growth of the schema over the conversation, after a warm-up
// conversation in the same schema (one turn), so every table and index already has its first pages:
// a fresh schema's first row allocates a page per index (about 100 KB here), a one-time cost of the
// database, not of the conversation. Every row, index entry and dead row version the conversation
// leaves is counted (no VACUUM). Linearity: the growth after half of the turns, doubled, against
// the growth after all of them.
async function storage(dbos: { database: string }) {
  const half = TURNS / 2;
  progress("storage: openrath, 400 one-step runs on one session");
  const turn = defineWorkflow("turn").step(
    "reply",
    (s, ctx) => {
      const i = Number(ctx.metadata.turn);
      return s.append(
        { kind: "user", content: message(i, "user") },
        { kind: "assistant", content: message(i, "assistant") },
      );
    },
    { entry: true },
  );
  const { runtime, schema } = await freshRuntime("postgres", turn);
  const worker = runtime.worker({ concurrency: 1, leaseMs: 30_000 });
  await worker.start();
  await runtime.result(
    (await runtime.submit("turn", Session.fromUserMessage("warm-up"), { metadata: { turn: 0 } })).id,
  );
  const before = await schemaBytes(url, schema);
  let session = Session.fromUserMessage("start");
  let chatHalf = 0;
  for (let i = 0; i < TURNS; i++) {
    const run = await runtime.submit("turn", session, { metadata: { turn: i } });
    session = await runtime.result(run.id);
    if (i + 1 === half) chatHalf = (await schemaBytes(url, schema)) - before;
  }
  await worker.stop();
  const chat = (await schemaBytes(url, schema)) - before;
  await runtime.store.close();

  progress("storage: openrath, one run of 400 steps (and one of 200)");
  const oneRun: Record<number, number> = {};
  for (const turns of [half, TURNS]) {
    const single = await freshRuntime("postgres", [
      conversationFlow("long", turns),
      conversationFlow("warm", 1),
    ]);
    const w2 = single.runtime.worker({ concurrency: 1, leaseMs: 30_000 });
    await w2.start();
    await single.runtime.wait((await single.runtime.submit("warm", Session.fromUserMessage("warm-up"))).id);
    const beforeSingle = await schemaBytes(url, single.schema);
    await single.runtime.wait((await single.runtime.submit("long", Session.fromUserMessage("start"))).id);
    await w2.stop();
    oneRun[turns] = (await schemaBytes(url, single.schema)) - beforeSingle;
    await single.runtime.store.close();
  }

  progress("storage: dbos, one workflow of 400 steps (and one of 200)");
  const dbosUrl = new URL(url);
  dbosUrl.pathname = `/${dbos.database}`;
  await runDbosConversation(conversation.slice(0, 1));
  const dbosGrowth: Record<number, number> = {};
  for (const turns of [half, TURNS]) {
    const dbosBefore = await schemaBytes(dbosUrl.toString(), "dbos");
    await runDbosConversation(conversation.slice(0, turns));
    dbosGrowth[turns] = (await schemaBytes(dbosUrl.toString(), "dbos")) - dbosBefore;
  }

  progress("storage: langgraph, 400 super-steps (and 200)");
  const lgSchema = `lgs_${Date.now()}`;
  const lg = await langGraphConversation(url, lgSchema);
  await lg.run(conversation.slice(0, 1));
  const lgGrowth: Record<number, number> = {};
  for (const turns of [half, TURNS]) {
    const lgBefore = await schemaBytes(url, lgSchema);
    await lg.run(conversation.slice(0, turns));
    lgGrowth[turns] = (await schemaBytes(url, lgSchema)) - lgBefore;
  }
  await lg.close();

  for (const [system, bytes, halfBytes] of [
    ["openrath-postgres (400 runs, one session)", chat, chatHalf],
    ["openrath-postgres (one run, 400 steps)", oneRun[TURNS]!, oneRun[half]!],
    ["dbos", dbosGrowth[TURNS]!, dbosGrowth[half]!],
    ["langgraph", lgGrowth[TURNS]!, lgGrowth[half]!],
  ] as const) {
    emit({
      bench: "durable.storage",
      system,
      turns: TURNS,
      contentBytes,
      grewBytes: bytes,
      timesContent: round(bytes / contentBytes, 2),
      grewBytesAtHalf: halfBytes,
      // 1 when the second half of the turns costs what the first half did; above 1, it grows faster.
      linearity: round(bytes / (2 * halfBytes), 2),
      target: "≤ 2× content, linear",
    });
  }
}

async function throughput() {
  const results: Record<string, number> = {};
  {
    progress("throughput: embedded (PGlite), one worker");
    const { runtime } = await freshRuntime("pglite", chain("one", 1));
    const worker = runtime.worker({ concurrency: 8, leaseMs: 30_000 });
    await worker.start();
    await warmUp(async () => runtime.wait((await runtime.submit("one", input())).id));
    const n = quick ? 200 : 1000;
    const ms = await timed(async () => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push((await runtime.submit("one", input())).id);
      await Promise.all(ids.map((id) => runtime.wait(id)));
    });
    results["openrath-pglite, 1 worker"] = (n / ms) * 1000;
    await worker.stop();
    await runtime.store.close();
  }
  for (const concurrency of [1, 16]) {
    progress(`throughput: postgres, in-process worker, concurrency ${concurrency}`);
    const { runtime } = await freshRuntime("postgres", chain("one", 1));
    const worker = runtime.worker({ concurrency, leaseMs: 30_000 });
    await worker.start();
    await warmUp(async () => runtime.wait((await runtime.submit("one", input())).id), concurrency);
    const n = quick ? 100 : concurrency === 1 ? 300 : 3000;
    const ms = await timed(() =>
      loops(concurrency, n, async () => runtime.wait((await runtime.submit("one", input())).id)),
    );
    results[`openrath-postgres, ${concurrency === 1 ? "sequential" : "concurrency 16"}`] = (n / ms) * 1000;
    await worker.stop();
    await runtime.store.close();
  }
  for (const concurrency of [1, 16]) {
    progress(`throughput: dbos, concurrency ${concurrency}`);
    await warmUp(() => runDbosChain(1), concurrency);
    const n = quick ? 100 : concurrency === 1 ? 300 : 1000;
    const ms = await timed(() => loops(concurrency, n, () => runDbosChain(1)));
    results[`dbos, ${concurrency === 1 ? "sequential" : "concurrency 16"}`] = (n / ms) * 1000;
  }
  for (const processes of [1, 2, 4]) {
    progress(`throughput: postgres, ${processes} worker process(es)`);
    const { store, schema } = await freshStore("postgres");
    const runtime = createDurableRuntime({ store });
    const workers = await Promise.all(
      Array.from({ length: processes }, (_, i) => spawnWorker(schema, `p${i}`, 16)),
    );
    const hash = workers[0]!.hashes.one!;
    await warmUp(() => loops(16, 16, async () => runtime.wait((await runtime.submit(hash, input())).id)));
    const n = quick ? 300 : 2000;
    const ms = await timed(() =>
      loops(16, n, async () => runtime.wait((await runtime.submit(hash, input())).id)),
    );
    results[`openrath-postgres, ${processes} worker process${processes > 1 ? "es" : ""}`] = (n / ms) * 1000;
    for (const w of workers) w.child.kill("SIGKILL");
    await store.close();
  }
  for (const [system, runsPerSecond] of Object.entries(results))
    emit({ bench: "durable.throughput", system, runsPerSecond: round(runsPerSecond, 1) });
  emit({
    bench: "durable.throughput.targets",
    embedded: "≥ 500 runs/s",
    postgresConcurrency16: "≥ 1000 runs/s",
  });
}

/**
 * Runs `fn` for a while before a throughput case is timed, at the case's concurrency, so the case
 * measures the steady state: a fresh PGlite's WebAssembly is compiled to optimised code in the
 * background during its first seconds, on the same two cores, and each connection prepares (and
 * custom-plans five times) every statement shape the case sends, such as each size of a grouped write.
 */
async function warmUp(fn: () => Promise<unknown>, concurrency = 1) {
  await loops(concurrency, quick ? 20 : 200, fn);
}

/** `concurrency` loops sharing `n` calls of `fn`. */
async function loops(concurrency: number, n: number, fn: () => Promise<unknown>) {
  let left = n;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) await fn();
    }),
  );
}

let bundle: Promise<string> | undefined;
/** The bench worker bundled into one file (so a restart costs a Node start, not a compile). */
function workerBundle(): Promise<string> {
  bundle ??= bundleInternal("durable-worker");
  return bundle;
}

interface Spawned {
  readonly child: ChildProcess;
  readonly hashes: Record<string, string>;
  readonly readyAt: number;
}

async function spawnWorker(
  schema: string,
  workerId: string,
  concurrency: number,
  leaseMs = 5_000,
): Promise<Spawned> {
  const file = await workerBundle();
  const child = spawn(process.execPath, [file, url, schema, workerId, String(concurrency), String(leaseMs)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (d) => {
      const line = String(d);
      if (!line.startsWith("ready ")) return;
      const hashes = Object.fromEntries(
        line
          .slice(6)
          .trim()
          .split(" ")
          .map((pair) => pair.split("=") as [string, string]),
      );
      resolve({ child, hashes, readyAt: Date.now() });
    });
    child.once("exit", (code) => reject(new Error(`bench worker exited (${code})`)));
  });
}

async function restartToResume() {
  progress("restart to resume after kill -9");
  const samples: { spawnToProgress: number; readyToProgress: number }[] = [];
  for (let round_ = 0; round_ < (quick ? 1 : 3); round_++) {
    const { store, schema } = await freshStore("postgres");
    const runtime = createDurableRuntime({ store });
    const first = await spawnWorker(schema, "resumer", 16, 30_000);
    const ids: string[] = [];
    for (let i = 0; i < 16; i++) ids.push((await runtime.submit(first.hashes.slow!, input())).id);
    // Let every run make progress, then kill the worker in the middle of its steps.
    while (
      (await store.listRuns({ tenantId: "default", status: "running" })).filter((r) => r.checkpointSeq >= 3)
        .length < 16
    ) {
      await new Promise((r) => setTimeout(r, 20));
    }
    first.child.kill("SIGKILL");
    await new Promise((r) => first.child.once("exit", r));
    const seqs = new Map<string, number>();
    for (const id of ids) seqs.set(id, (await store.getRun(id))!.checkpointSeq);
    const spawnedAt = Date.now();
    const second = await spawnWorker(schema, "resumer", 16, 30_000);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    let movedAt = 0;
    while (movedAt === 0) {
      const r = await client.query(
        `select id, checkpoint_seq from ${schema}.runs where id = any($1::uuid[])`,
        [ids],
      );
      if (r.rows.some((row) => Number(row.checkpoint_seq) > seqs.get(row.id)!)) movedAt = Date.now();
      else await new Promise((res) => setTimeout(res, 5));
    }
    await client.end();
    samples.push({ spawnToProgress: movedAt - spawnedAt, readyToProgress: movedAt - second.readyAt });
    second.child.kill("SIGKILL");
    await store.close();
  }
  emit({
    bench: "durable.restart-to-resume",
    system: "openrath-postgres (same worker identity, lease 30 s)",
    msFromSpawnToProgress: median(samples.map((s) => s.spawnToProgress)),
    msFromReadyToProgress: median(samples.map((s) => s.readyToProgress)),
    target: "< 1000 ms",
    anchor: "DBOS 1.3 s (issue)",
  });
}

const dbos = await stepOverhead();
await storage(dbos);
await throughput();
await dbos.shutdown();
await restartToResume();
