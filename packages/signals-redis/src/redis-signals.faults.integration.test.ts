import { randomBytes } from "node:crypto";
import { Session } from "@openrath/core";
import { createDurableRuntime, defineWorkflow, type StepContext } from "@openrath/runtime-durable";
import { postgresStore } from "@openrath/store-postgres";
import { afterAll, describe, expect, it } from "vitest";
import { redisSignals } from "./redis-signals.js";
import { haveRedisServer, POSTGRES_URL, postgresTestService, startRedis } from "./testing/redis-server.js";

const postgres = await postgresTestService();
const canRun = postgres.available && haveRedisServer();

// Redis killed (SIGKILL) and restarted in the middle of a batch: one "API" process submits and
// follows, one "worker" process executes, each with its own store handle and its own Redis
// connections; their fallback is the store's LISTEN/NOTIFY. Leases are 30 s, so the workers'
// safety sweep comes every 10 s: anything faster than that came through a signal.
describe.skipIf(!canRun)(`Redis killed and restarted mid-batch (${postgres.reason})`, () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  });

  it("every run finishes, signals fall back to PostgreSQL with a bounded delay, and Redis is used again once it returns", async () => {
    const redis = await startRedis();
    cleanups.push(() => redis.stop());
    const schema = `fault_${randomBytes(5).toString("hex")}`;
    const prefix = `fault-${randomBytes(4).toString("hex")}`;
    const apiStore = await postgresStore({ connectionString: POSTGRES_URL, schema, migrate: true });
    const workerStore = await postgresStore({ connectionString: POSTGRES_URL, schema });
    const apiSignals = redisSignals({ url: redis.url, prefix, fallback: apiStore.signals });
    const workerSignals = redisSignals({ url: redis.url, prefix, fallback: workerStore.signals });
    cleanups.push(
      () => apiStore.close(),
      () => workerStore.close(),
      () => apiSignals.close(),
      () => workerSignals.close(),
    );
    await Promise.all([apiSignals.ready(), workerSignals.ready()]);

    const started = new Map<string, number>();
    const flow = defineWorkflow(`fault-${prefix}`)
      .step(
        "first",
        async (s, ctx: StepContext) => {
          started.set(ctx.runId, Date.now());
          ctx.emitLive("token.delta", { text: "hel" });
          await new Promise((r) => setTimeout(r, 20));
          ctx.emitLive("token.delta", { text: "lo" });
          return s.append({ kind: "assistant", content: "hello" });
        },
        { entry: true, next: "second" },
      )
      .step("second", async (s, ctx: StepContext) => {
        await ctx.emit("step.note", { step: "second" });
        await new Promise((r) => setTimeout(r, 20));
        return s.append({ kind: "assistant", content: "done" });
      });
    const api = createDurableRuntime({ store: apiStore, signals: apiSignals });
    const workers = createDurableRuntime({ store: workerStore, signals: workerSignals });
    await api.register(flow);
    await workers.register(flow);
    const worker = workers.worker({ concurrency: 4, leaseMs: 30_000 });
    await worker.start();
    cleanups.push(() => worker.stop({ drain: false }));

    const submitted = new Map<string, number>();
    const submit = async (n: number) => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const at = Date.now();
        const run = await api.submit(flow.name, Session.fromUserMessage(`task ${submitted.size}`));
        submitted.set(run.id, at);
        ids.push(run.id);
      }
      return ids;
    };
    const delays = (ids: readonly string[]) => ids.map((id) => started.get(id)! - submitted.get(id)!);

    // Before: a batch in flight over Redis.
    const before = await submit(12);
    while ([...started.keys()].filter((id) => before.includes(id)).length < 4)
      await new Promise((r) => setTimeout(r, 5));

    // Redis dies mid-batch.
    await redis.kill();
    const during = await submit(12);
    const results = await Promise.all([...before, ...during].map((id) => api.wait(id)));
    expect(results.map((r) => r.status)).toEqual(results.map(() => "succeeded"));
    // Runs submitted while Redis was down started through the PostgreSQL path, well before a sweep.
    expect(Math.max(...delays(during))).toBeLessThan(5_000);
    expect(apiSignals.stats().publishedFallback).toBeGreaterThan(0);
    expect(workerSignals.stats().receivedFallback).toBeGreaterThan(0);
    expect(workerSignals.stats().state).toBe("connecting");

    // Redis returns (empty: it never held anything) and both sides reconnect on their own.
    await redis.restart();
    await Promise.all([apiSignals.ready({ timeoutMs: 15_000 }), workerSignals.ready({ timeoutMs: 15_000 })]);
    expect(workerSignals.stats().reconnects).toBeGreaterThanOrEqual(1);
    const publishedBefore = apiSignals.stats().publishedRedis;
    const receivedBefore = workerSignals.stats().receivedRedis;
    // A run that starts a little later, so its follower is listening before it emits.
    const liveRun = await api.submit(flow.name, Session.fromUserMessage("live"), {
      notBefore: Date.now() + 300,
    });
    const watching = (async () => {
      const out = [];
      for await (const event of api.stream(liveRun.id)) out.push(event);
      return out;
    })();
    const after = await submit(6);
    const events = await watching;
    const finals = await Promise.all(after.map((id) => api.wait(id)));
    expect(finals.map((r) => r.status)).toEqual(finals.map(() => "succeeded"));
    expect(apiSignals.stats().publishedRedis).toBeGreaterThan(publishedBefore);
    expect(workerSignals.stats().receivedRedis).toBeGreaterThan(receivedBefore);
    expect(Math.max(...delays(after))).toBeLessThan(5_000);
    // Live events flow through Redis again.
    expect(events.filter((e) => "live" in e).map((e) => (e.data as { text: string }).text)).toEqual([
      "hel",
      "lo",
    ]);
    expect(started.size).toBe(31);
  }, 90_000);
});
