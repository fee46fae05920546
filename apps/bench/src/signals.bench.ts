import { randomBytes } from "node:crypto";
import { Session } from "@openrath/core";
import {
  createDurableRuntime,
  type DurableRuntime,
  defineWorkflow,
  type FollowedEvent,
  type RunStoreV1,
  type SignalsV1,
  type StepContext,
} from "@openrath/runtime-durable";
import { redisSignals } from "@openrath/signals-redis";
import { postgresStore } from "@openrath/store-postgres";
import { emit, median, progressFor, quantile, round } from "./internal/report.js";

// Signals, one run: submit-to-start latency of an idle worker woken by Redis signals (with the
// store's LISTEN/NOTIFY as their fallback, and Redis alone), by PostgreSQL LISTEN/NOTIFY, their
// samples interleaved, and by polling at the original's 0.1 s interval (the anchor: a worker
// whose only wake-up is a 0.1 s sweep); then fan-out of one run's events to 100 followers (live
// token deltas through Redis; stored events through Redis hints and through LISTEN/NOTIFY).
// Needs OPENRATH_TEST_POSTGRES_URL and OPENRATH_TEST_REDIS_URL (tooling/scripts/services.mjs
// starts both); a missing one gives `skipped` lines.

const progress = progressFor("signals.bench");
const POSTGRES = process.env.OPENRATH_TEST_POSTGRES_URL;
const REDIS = process.env.OPENRATH_TEST_REDIS_URL;
const SAMPLES = 60;
/**
 * Runs submitted first and not counted, per mode: each mode starts on fresh stores and signals, and
 * the first one also warms this process's code paths.
 */
const WARMUP = 20;
const SUBSCRIBERS = 100;
const LIVE_EVENTS = 2000;
const STORED_EVENTS = 200;
const ms = (v: number) => round(v, 3);

/** Signals that deliver nothing: the polling anchor's worker is woken by its sweep alone. */
function silentSignals(): SignalsV1 {
  return {
    specVersion: "v1",
    name: "silent",
    capabilities: { crossProcess: false, livePayloads: false },
    publish: async () => {},
    subscribe: async () => async () => {},
    close: async () => {},
  };
}

interface Side {
  readonly store: RunStoreV1;
  readonly signals?: SignalsV1;
}

/**
 * `redis`: the worker hears Redis and, as its fallback, the store's LISTEN/NOTIFY (the documented
 * set-up); `redis-only`: Redis alone, so only the runtime's Redis publish wakes it.
 */
type Mode = "redis" | "redis-only" | "listen-notify" | "polling-100ms";

/** An "API process" and a "worker process" on one schema, each with its own connections. */
async function open(mode: Mode, schema: string, prefix: string): Promise<{ api: Side; worker: Side }> {
  const side = async (migrate: boolean): Promise<Side> => {
    const store = await postgresStore({ connectionString: POSTGRES, schema, migrate });
    if (mode === "redis")
      return { store, signals: redisSignals({ url: REDIS!, prefix, fallback: store.signals }) };
    if (mode === "redis-only") return { store, signals: redisSignals({ url: REDIS!, prefix }) };
    if (mode === "polling-100ms") return { store, signals: silentSignals() };
    return { store };
  };
  const api = await side(true);
  return { api, worker: await side(false) };
}

async function close(...sides: Side[]) {
  for (const s of sides) {
    if (s.signals) await s.signals.close();
    await s.store.close();
  }
}

/** One mode's API and worker runtimes, an idle worker, and what its samples measured. */
interface StartCase {
  readonly mode: Mode;
  readonly api: Side;
  readonly worker: Side;
  readonly apiRuntime: DurableRuntime;
  readonly workerRuntime: DurableRuntime;
  readonly stop: () => Promise<void>;
  readonly flow: string;
  readonly started: Map<string, number>;
  readonly latencies: number[];
  readonly submits: number[];
  readonly wakes: number[];
}

async function startCase(mode: Mode): Promise<StartCase> {
  const schema = `bench_${randomBytes(5).toString("hex")}`;
  const { api, worker } = await open(mode, schema, `bench-${randomBytes(4).toString("hex")}`);
  const started = new Map<string, number>();
  const flow = defineWorkflow(`start-${mode}-${schema}`).step(
    "only",
    (s, ctx: StepContext) => {
      started.set(ctx.runId, performance.now());
      return s;
    },
    { entry: true },
  );
  const apiRuntime = createDurableRuntime(api);
  const workerRuntime = createDurableRuntime(worker);
  await apiRuntime.register(flow);
  await workerRuntime.register(flow);
  // Polling: a 300 ms lease makes the worker sweep (and look for work) every 100 ms, as the
  // original's idle loop does; the signalled modes keep the default lease (a sweep every 10 s).
  const w = workerRuntime.worker({ concurrency: 4, leaseMs: mode === "polling-100ms" ? 300 : 30_000 });
  await w.start();
  return {
    mode,
    api,
    worker,
    apiRuntime,
    workerRuntime,
    stop: () => w.stop(),
    flow: flow.name,
    started,
    latencies: [],
    submits: [],
    wakes: [],
  };
}

/** One submission, timed from the call to the step's start; counted unless `warmUp`. */
async function sampleStart(c: StartCase, i: number, warmUp: boolean): Promise<void> {
  await new Promise((r) => setTimeout(r, 15 + Math.random() * 30));
  const t0 = performance.now();
  const run = await c.apiRuntime.submit(c.flow, Session.fromUserMessage(`job ${i}`));
  const returned = performance.now();
  if (!warmUp) c.submits.push(returned - t0);
  while (!c.started.has(run.id)) await new Promise((r) => setImmediate(r));
  if (!warmUp) {
    c.latencies.push(c.started.get(run.id)! - t0);
    c.wakes.push(c.started.get(run.id)! - returned);
  }
  // Not runtime.wait: the polling anchor's signals deliver nothing, so wait by reading the row.
  while ((await c.api.store.getRun(run.id))?.status !== "succeeded")
    await new Promise((r) => setTimeout(r, 5));
}

async function endCase(c: StartCase, interleaved: readonly Mode[]): Promise<void> {
  await c.stop();
  await close(c.api, c.worker);
  emit({
    case: "signals_submit_to_start",
    mode: c.mode,
    samples: c.latencies.length,
    p50_ms: ms(median(c.latencies)),
    p90_ms: ms(quantile(c.latencies, 0.9)),
    p99_ms: ms(quantile(c.latencies, 0.99)),
    max_ms: ms(Math.max(...c.latencies)),
    submit_call_p50_ms: ms(median(c.submits)),
    // From the submit call's return to the step's start: the signal, the claim and the checkpoint read.
    after_submit_p50_ms: ms(median(c.wakes)),
    // The modes whose samples alternated with this one's (same process, same minutes).
    interleaved_with: interleaved.filter((m) => m !== c.mode),
    anchor: "polling-100ms",
  });
}

/**
 * Submit-to-start of the signalled modes side by side: their samples alternate (each mode first in
 * turn), so every mode sees the same warm process and the same load. Measured one after another,
 * the first mode measured paid for the process's warm-up (about 1 ms at p50).
 */
async function submitToStart(modes: readonly Mode[]): Promise<void> {
  const cases: StartCase[] = [];
  for (const mode of modes) cases.push(await startCase(mode));
  for (let i = 0; i < SAMPLES + WARMUP; i++) {
    for (let k = 0; k < cases.length; k++) await sampleStart(cases[(i + k) % cases.length]!, i, i < WARMUP);
  }
  for (const c of cases) await endCase(c, modes);
}

/** One run's events followed by SUBSCRIBERS streams spread over four "API processes". */
async function fanOut(mode: "redis" | "listen-notify", kind: "live" | "stored"): Promise<void> {
  const schema = `bench_${randomBytes(5).toString("hex")}`;
  const prefix = `bench-${randomBytes(4).toString("hex")}`;
  const { api, worker } = await open(mode, schema, prefix);
  const extra: Side[] = [];
  for (let i = 0; i < 3; i++) {
    const store = await postgresStore({ connectionString: POSTGRES, schema });
    extra.push(
      mode === "redis"
        ? { store, signals: redisSignals({ url: REDIS!, prefix, fallback: store.signals }) }
        : { store },
    );
  }
  const count = kind === "live" ? LIVE_EVENTS : STORED_EVENTS;
  let release!: () => void;
  const go = new Promise<void>((r) => (release = r));
  const flow = defineWorkflow(`fan-${mode}-${kind}-${schema}`).step(
    "talk",
    async (s, ctx: StepContext) => {
      await go;
      for (let i = 0; i < count; i++) {
        const data = { i, sentAt: performance.timeOrigin + performance.now() };
        if (kind === "live") {
          ctx.emitLive("token.delta", data);
          if (i % 50 === 49) await new Promise((r) => setImmediate(r));
        } else await ctx.emit("step.delta", data);
      }
      return s;
    },
    { entry: true },
  );
  const runtimes: DurableRuntime[] = [api, ...extra].map((side) => createDurableRuntime(side));
  const workerRuntime = createDurableRuntime(worker);
  await runtimes[0]!.register(flow);
  await workerRuntime.register(flow);
  const w = workerRuntime.worker({ concurrency: 1, leaseMs: 30_000 });
  await w.start();
  const run = await runtimes[0]!.submit(flow.name, Session.fromUserMessage("stream"));
  const delays: number[] = [];
  let received = 0;
  let firstAt = Number.POSITIVE_INFINITY;
  let lastAt = 0;
  const follow = async (runtime: DurableRuntime) => {
    for await (const event of runtime.stream(run.id) as AsyncIterable<FollowedEvent>) {
      const data = event.data as { sentAt?: number } | null;
      if (typeof data?.sentAt !== "number") continue;
      const now = performance.timeOrigin + performance.now();
      delays.push(now - data.sentAt);
      received++;
      firstAt = Math.min(firstAt, now);
      lastAt = Math.max(lastAt, now);
    }
  };
  const streams = Array.from({ length: SUBSCRIBERS }, (_, i) => follow(runtimes[i % runtimes.length]!));
  await new Promise((r) => setTimeout(r, 500));
  release();
  await Promise.all(streams);
  await w.stop();
  await close(api, worker, ...extra);
  const expected = count * SUBSCRIBERS;
  emit({
    case: "signals_fan_out",
    mode,
    events: kind,
    subscribers: SUBSCRIBERS,
    events_per_run: count,
    delivered: received,
    complete: received === expected,
    deliveries_per_s: Math.round(received / ((lastAt - firstAt) / 1000)),
    p50_delay_ms: ms(median(delays)),
    p99_delay_ms: ms(quantile(delays, 0.99)),
  });
}

if (!POSTGRES) {
  emit({
    case: "signals",
    skipped: "OPENRATH_TEST_POSTGRES_URL is not set (tooling/scripts/services.mjs starts PostgreSQL)",
  });
} else {
  const signalled: Mode[] = REDIS ? ["redis", "redis-only", "listen-notify"] : ["listen-notify"];
  if (!REDIS)
    emit({ case: "signals_submit_to_start", mode: "redis", skipped: "OPENRATH_TEST_REDIS_URL is not set" });
  progress(`submit-to-start: ${signalled.join(", ")} (interleaved)`);
  await submitToStart(signalled);
  // The anchor on its own: its worker sweeps every 100 ms, which would disturb the others.
  progress("submit-to-start: polling-100ms");
  await submitToStart(["polling-100ms"]);
  if (REDIS) {
    progress("fan-out: redis live");
    await fanOut("redis", "live");
    progress("fan-out: redis stored");
    await fanOut("redis", "stored");
  }
  progress("fan-out: listen-notify stored");
  await fanOut("listen-notify", "stored");
}
