// The Agent Server under load, on loopback and local PostgreSQL (issue 23, "Faults and load"), each
// case next to its anchor in the same run:
// - throughput: N clients each creating a one-step run and following its SSE stream to the end,
//   against `openrath serve` with its embedded worker and against `serve --no-worker` with two
//   `openrath worker` processes; anchor: the in-process runtime (submit + `runtime.stream`);
// - per-request overhead: the server's routes against a bare Fastify route returning the same JSON;
// - 1,000 SSE followers on one server process: each stored event's delay from its write to receipt;
//   anchor: one in-process `runtime.stream` per run in the client process, in the same run.
//
//   source /tmp/svc.env   # or OPENRATH_BENCH_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/postgres
//   pnpm --filter @openrath/bench run bench:server
//   OPENRATH_BENCH_SECONDS=10 pnpm --filter @openrath/bench run bench:server   # a quick check
//
// One JSON line per case on stdout; progress on stderr. Every case gets a fresh database.
import { Session } from "@openrath/core";
import { createDurableRuntime, type RunStoreV1 } from "@openrath/runtime-durable";
import { hashTokenSecret, newTokenSecret } from "@openrath/server";
import { postgresStore } from "@openrath/store-postgres";
import autocannon from "autocannon";
import { benchPostgresUrl } from "./internal/durable-fixtures.js";
import { emit, median, progressFor, quantile, round } from "./internal/report.js";
import { one, ticker } from "./internal/server-flows.js";
import {
  bareServer,
  type Child,
  cpuMsOf,
  freshDatabase,
  serve,
  worker,
} from "./internal/server-processes.js";
import { apiClient, createRun, followStream, type Received, succeeded } from "./internal/sse-client.js";

const progress = progressFor("server");
const url = benchPostgresUrl();
const SECONDS = Number(process.env.OPENRATH_BENCH_SECONDS ?? 60);
const CLIENTS = Number(process.env.OPENRATH_BENCH_CLIENTS ?? 16);
const WORKER_CONCURRENCY = 16;
/** Followers: FOLLOWED_RUNS runs with FOLLOWERS_PER_RUN streams each. */
const FOLLOWED_RUNS = 100;
const FOLLOWERS_PER_RUN = 10;
const WARM_UP_MS = Math.min(5, SECONDS / 4) * 1000;
const OVERHEAD_SECONDS = Math.max(3, Math.min(10, SECONDS / 6));

/** A store on `databaseUrl` (migrated) and a bearer token for it, when the store keeps tokens. */
async function prepared(databaseUrl: string): Promise<{ store: RunStoreV1; token?: string }> {
  // The pool `serve` opens (the default, 10 connections), so the anchor has no more connections.
  const store = await postgresStore({ connectionString: databaseUrl, migrate: true });
  if (!store.capabilities.access || !store.access) return { store };
  const token = newTokenSecret();
  await store.access.createToken({
    tenantId: "default",
    name: "bench",
    grants: ["*"],
    secretHash: hashTokenSecret(token),
  });
  return { store, token };
}

/** `auth` for `serve`: tokens when the store keeps them, else local (loopback, no credentials). */
const authOf = (token: string | undefined) => (token ? "tokens" : "local") as "tokens" | "local";

interface LoopResult {
  runs: number;
  errors: number;
  firstError?: string;
  seconds: number;
}

/** `clients` loops calling `once` until `ms` have passed; in-flight calls finish and count. */
async function closedLoop(clients: number, ms: number, once: () => Promise<void>): Promise<LoopResult> {
  const result: LoopResult = { runs: 0, errors: 0, seconds: 0 };
  const start = performance.now();
  const until = start + ms;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < until) {
        try {
          await once();
          result.runs++;
        } catch (error) {
          result.errors++;
          result.firstError ??= String(error).slice(0, 300);
        }
      }
    }),
  );
  result.seconds = (performance.now() - start) / 1000;
  return result;
}

/** The CPU time (ms) this process (the clients, and the in-process runtime) has used so far. */
const ownCpuMs = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

/**
 * Warm-up, then the timed loop; one JSON line. `children` are the system's other processes: their
 * CPU time per run is reported beside this process's (the clients', and the in-process runtime's),
 * a measure the machine's other load moves less than runs per second.
 */
async function measured(
  system: string,
  once: () => Promise<void>,
  children: Child[] = [],
): Promise<{ runsPerSecond: number; cpuMsPerRun: number }> {
  progress(`throughput: ${system}: warm-up ${WARM_UP_MS / 1000} s, then ${SECONDS} s`);
  await closedLoop(CLIENTS, WARM_UP_MS, once);
  const cpu = () => children.map((child) => cpuMsOf(child.child.pid));
  const [ownBefore, childrenBefore] = [ownCpuMs(), cpu()];
  const r = await closedLoop(CLIENTS, SECONDS * 1000, once);
  const [ownAfter, childrenAfter] = [ownCpuMs(), cpu()];
  const perRun = (ms: number) => round(ms / Math.max(1, r.runs + r.errors), 3);
  const childMs = childrenAfter.map((after, i) =>
    after === undefined || childrenBefore[i] === undefined ? Number.NaN : after - childrenBefore[i],
  );
  const runsPerSecond = r.runs / r.seconds;
  const cpuMsPerRun = perRun(ownAfter - ownBefore + childMs.reduce((a, b) => a + b, 0));
  emit({
    bench: "server.throughput",
    system,
    clients: CLIENTS,
    seconds: round(r.seconds, 1),
    runs: r.runs,
    runsPerSecond: round(runsPerSecond, 1),
    errors: r.errors,
    ...(r.firstError ? { firstError: r.firstError } : {}),
    cpuMsPerRun: {
      benchProcess: perRun(ownAfter - ownBefore),
      ...(childMs.length > 0 ? { children: childMs.map(perRun) } : {}),
      total: cpuMsPerRun,
    },
  });
  return { runsPerSecond, cpuMsPerRun };
}

const input = () => Session.fromUserMessage("bench");

type Measured = Awaited<ReturnType<typeof measured>>;

async function inProcess(): Promise<Measured> {
  const db = await freshDatabase(url);
  const { store } = await prepared(db.url);
  const runtime = createDurableRuntime({ store });
  await runtime.register(one);
  await runtime.worker({ concurrency: WORKER_CONCURRENCY }).start();
  try {
    return await measured("in-process runtime (anchor)", async () => {
      const run = await runtime.submit("one", input());
      let last: { data: unknown } | undefined;
      for await (const event of runtime.stream(run.id)) last = event;
      if ((last?.data as { to?: string } | null)?.to !== "succeeded")
        throw new Error(`run ${run.id} did not succeed`);
    });
  } finally {
    await runtime.close();
    await db.drop();
  }
}

async function overHttp(workers: 1 | 2): Promise<Measured> {
  const db = await freshDatabase(url);
  const { store, token } = await prepared(db.url);
  await store.close();
  const children: Child[] = [];
  try {
    const server = await serve(db.url, {
      worker: workers === 1,
      concurrency: WORKER_CONCURRENCY,
      auth: authOf(token),
    });
    children.push(server);
    if (workers === 2)
      children.push(
        ...(await Promise.all([worker(db.url, WORKER_CONCURRENCY), worker(db.url, WORKER_CONCURRENCY)])),
      );
    const client = apiClient(server.url, token, CLIENTS * 2);
    const system =
      workers === 1 ? "HTTP: serve, embedded worker" : "HTTP: serve --no-worker + 2 worker processes";
    const rate = await measured(
      `${system} (auth ${authOf(token)})`,
      async () => {
        const id = await createRun(client, "one", "bench");
        const events = await followStream(client, id);
        if (!succeeded(events)) throw new Error(`run ${id}: stream ended without success`);
      },
      children,
    );
    await client.dispatcher.close();
    return rate;
  } finally {
    for (const child of children.reverse()) await child.stop();
    await db.drop();
  }
}

/** `OPENRATH_BENCH_ONLY` names cases; `throughput` is all three systems, `throughput-1` without the two-worker case. */
async function throughput(twoWorkers: boolean) {
  const anchor = await inProcess();
  const one_ = await overHttp(1);
  const two = twoWorkers ? await overHttp(2) : undefined;
  const ratio = (of: Measured) => round(of.runsPerSecond / anchor.runsPerSecond, 2);
  const cpuRatio = (of: Measured) => round(of.cpuMsPerRun / anchor.cpuMsPerRun, 2);
  emit({
    bench: "server.throughput.ratio",
    httpOneWorkerVsInProcess: ratio(one_),
    ...(two ? { httpTwoWorkersVsInProcess: ratio(two) } : {}),
    cpuPerRunHttpOneWorkerVsInProcess: cpuRatio(one_),
    ...(two ? { cpuPerRunHttpTwoWorkersVsInProcess: cpuRatio(two) } : {}),
    target: "≥ 0.70, zero errors",
  });
}

type Pass = Awaited<ReturnType<typeof cannon>>;

/** One autocannon pass: mean and p99 latency (ms), requests/s, and anything but a 2xx. */
async function cannon(target: string, headers: Record<string, string>) {
  const result = await autocannon({ url: target, connections: 16, duration: OVERHEAD_SECONDS, headers });
  return {
    meanMs: result.latency.mean,
    p99Ms: result.latency.p99,
    requestsPerSecond: result.requests.average,
    failed: result.non2xx + result.errors + result.timeouts,
  };
}

async function overhead() {
  const db = await freshDatabase(url);
  const { store, token } = await prepared(db.url);
  await store.close();
  const server = await serve(db.url, { worker: false, auth: authOf(token) });
  const bare = await bareServer(db.url);
  try {
    const client = apiClient(server.url, token, 2);
    const runId = await createRun(client, "one", "bench");
    const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
    const [ours, theirs] = await Promise.all(
      [server.url, bare.url].map(async (base) =>
        (await fetch(`${base}/v1/runs/${runId}`, { headers })).text(),
      ),
    );
    await client.dispatcher.close();
    const cases = [
      ["GET /v1/runs/{id} (authenticated, one store read)", `/v1/runs/${runId}`],
      ["GET /health/live (no credentials)", "/health/live"],
    ] as const;
    const samples = new Map<string, { server: Pass[]; bare: Pass[] }>();
    for (const [name] of cases) samples.set(name, { server: [], bare: [] });
    // Warm-up pass on both, then interleaved rounds, so a change of the machine's load hits both.
    for (const [, path] of cases) {
      await cannon(`${server.url}${path}`, headers);
      await cannon(`${bare.url}${path}`, headers);
    }
    const rounds = SECONDS >= 30 ? 3 : 2;
    for (let r = 0; r < rounds; r++) {
      for (const [name, path] of cases) {
        progress(`overhead: round ${r + 1} of ${rounds}: ${name}`);
        samples.get(name)!.server.push(await cannon(`${server.url}${path}`, headers));
        samples.get(name)!.bare.push(await cannon(`${bare.url}${path}`, headers));
      }
    }
    for (const [name, { server: s, bare: b }] of samples) {
      const mean = (xs: { meanMs: number }[]) => median(xs.map((x) => x.meanMs));
      const rps = (xs: { requestsPerSecond: number }[]) => median(xs.map((x) => x.requestsPerSecond));
      emit({
        bench: "server.overhead",
        route: name,
        connections: 16,
        secondsPerPass: OVERHEAD_SECONDS,
        rounds,
        serverMeanMs: round(mean(s), 2),
        bareMeanMs: round(mean(b), 2),
        serverP99Ms: median(s.map((x) => x.p99Ms)),
        bareP99Ms: median(b.map((x) => x.p99Ms)),
        serverRequestsPerSecond: Math.round(rps(s)),
        bareRequestsPerSecond: Math.round(rps(b)),
        latencyRatio: round(mean(s) / mean(b), 2),
        failed: [...s, ...b].reduce((n, x) => n + x.failed, 0),
        ...(name.startsWith("GET /v1/runs") ? { sameBody: ours === theirs, target: "≤ 2×" } : {}),
      });
    }
  } finally {
    await server.stop();
    await bare.stop();
    await db.drop();
  }
}

async function followers() {
  const db = await freshDatabase(url);
  const { store, token } = await prepared(db.url);
  const runtime = createDurableRuntime({ store });
  await runtime.register(ticker);
  const server = await serve(db.url, { worker: false, auth: authOf(token) });
  const work = await worker(db.url, 128);
  const count = FOLLOWED_RUNS * FOLLOWERS_PER_RUN;
  try {
    progress(`followers: ${FOLLOWED_RUNS} runs, ${count} SSE followers on one server process`);
    const ids: string[] = [];
    for (let i = 0; i < FOLLOWED_RUNS; i++) ids.push((await runtime.submit("ticker", input())).id);
    const client = apiClient(server.url, token, count + 10);
    const started = performance.now();
    let open = 0;
    let allOpenMs = 0;
    // The anchor: one in-process follow of each run (`runtime.stream` on the store's own signals)
    // in this process, beside the HTTP followers, so it shares their event loop and the writer's
    // delays: what is left of the budget once the events are written and signalled.
    const anchors = Promise.all(
      ids.map(async (id) => {
        const openedAt = performance.timeOrigin + performance.now();
        const delays: number[] = [];
        for await (const event of runtime.stream(id)) {
          const receivedAt = performance.timeOrigin + performance.now();
          if (!("live" in event) && event.at >= openedAt) delays.push(receivedAt - event.at);
        }
        return delays;
      }),
    );
    const outcomes = await Promise.allSettled(
      ids.flatMap((id) =>
        Array.from({ length: FOLLOWERS_PER_RUN }, async () => {
          let openedAt = 0;
          const events = await followStream(client, id, (at) => {
            openedAt = at;
            if (++open === count) allOpenMs = performance.now() - started;
          });
          if (!succeeded(events)) throw new Error(`run ${id}: stream ended without success`);
          // Only events written after this stream opened measure delivery (earlier ones are catch-up).
          return events.filter((event: Received) => event.at >= openedAt);
        }),
      ),
    );
    await client.dispatcher.close();
    const anchorDelays = (await anchors).flat();
    const delays: number[] = [];
    let errors = 0;
    let firstError: string | undefined;
    for (const outcome of outcomes) {
      if (outcome.status === "rejected") {
        errors++;
        firstError ??= String(outcome.reason).slice(0, 300);
      } else for (const event of outcome.value) delays.push(event.receivedAt - event.at);
    }
    emit({
      bench: "server.sse-followers",
      followers: count,
      runs: FOLLOWED_RUNS,
      auth: authOf(token),
      secondsTotal: round((performance.now() - started) / 1000, 1),
      msUntilAllOpen: Math.round(allOpenMs),
      deliveries: delays.length,
      p50Ms: round(quantile(delays, 0.5), 1),
      p90Ms: round(quantile(delays, 0.9), 1),
      p99Ms: round(quantile(delays, 0.99), 1),
      maxMs: round(Math.max(...delays), 1),
      errors,
      ...(firstError ? { firstError } : {}),
      anchor: `${FOLLOWED_RUNS} in-process runtime.stream follows (one per run) in the client process`,
      anchorDeliveries: anchorDelays.length,
      anchorP50Ms: round(quantile(anchorDelays, 0.5), 1),
      anchorP99Ms: round(quantile(anchorDelays, 0.99), 1),
      target: "p99 < 50 ms",
    });
  } finally {
    await server.stop();
    await work.stop();
    await runtime.close();
    await db.drop();
  }
}

const only = process.env.OPENRATH_BENCH_ONLY?.split(",");
if (!only || only.includes("throughput")) await throughput(true);
else if (only.includes("throughput-1")) await throughput(false);
if (!only || only.includes("overhead")) await overhead();
if (!only || only.includes("followers")) await followers();
