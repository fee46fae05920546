import { randomBytes } from "node:crypto";
import { Session } from "@openrath/core";
import { createDurableRuntime, defineWorkflow } from "@openrath/runtime-durable";
import { postgresStore } from "@openrath/store-postgres";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { redisSignals } from "./redis-signals.js";
import { POSTGRES_URL, postgresTestService, redisTestService } from "./testing/redis-server.js";

const postgres = await postgresTestService();
const redis = await redisTestService();
afterAll(() => redis.stop());

// Anyone who can reach the Redis server can publish on our channels. A cancel published there is
// a hint: the worker aborts a step only once the store says the run is cancelled (ADR 0015).
describe.skipIf(!postgres.available || !redis.available)(
  `a cancel published on Redis by another client is a hint, never authority (${postgres.reason}; ${redis.reason})`,
  () => {
    it("does not abort the running step; the store's cancel does", async () => {
      const prefix = `forged-${randomBytes(4).toString("hex")}`;
      const schema = `forged_${randomBytes(5).toString("hex")}`;
      const store = await postgresStore({ connectionString: POSTGRES_URL!, schema, migrate: true });
      const signals = redisSignals({ url: redis.url!, prefix, fallback: store.signals });
      const runtime = createDurableRuntime({ store, signals });
      const raw = new Redis(redis.url!);
      const started: string[] = [];
      const aborted: string[] = [];
      const ignored: string[] = [];
      try {
        const flow = defineWorkflow("patient").step(
          "wait",
          async (session, ctx) => {
            started.push(ctx.runId);
            await new Promise<void>((resolve, reject) => {
              const timer = setTimeout(resolve, 1500);
              ctx.signal.addEventListener("abort", () => {
                clearTimeout(timer);
                aborted.push(ctx.runId);
                reject(ctx.signal.reason);
              });
            });
            return session.append({ kind: "assistant", content: "waited", author: "patient" });
          },
          { entry: true },
        );
        await runtime.register(flow);
        await runtime
          .worker({
            leaseMs: 5_000,
            log: (_level, message, data) => {
              if (message.startsWith("ignored a cancel signal")) ignored.push(String(data?.runId));
            },
          })
          .start();
        const run = await runtime.submit("patient", Session.fromUserMessage("hold on"));
        while (!started.includes(run.id)) await new Promise((r) => setTimeout(r, 10));
        // A well-formed cancel, exactly as our own publisher would send it.
        await raw.publish(`${prefix}:cancel`, JSON.stringify({ k: "c", r: run.id }));
        const ended = await runtime.wait(run.id, { signal: AbortSignal.timeout(20_000) });
        expect(ended).toMatchObject({ status: "succeeded", attempt: 1 });
        expect(aborted).toEqual([]);
        expect(ignored).toContain(run.id);

        const second = await runtime.submit("patient", Session.fromUserMessage("never mind"));
        while (!started.includes(second.id)) await new Promise((r) => setTimeout(r, 10));
        await runtime.cancel(second.id);
        expect((await runtime.wait(second.id)).status).toBe("cancelled");
        await expect.poll(() => aborted.includes(second.id), { timeout: 3_000, interval: 20 }).toBe(true);
      } finally {
        raw.disconnect();
        await runtime.close({ drain: false });
      }
    });
  },
);
