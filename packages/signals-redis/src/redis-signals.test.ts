import { inProcessSignals, type Signal } from "@openrath/runtime-durable/store";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { redisSignals } from "./redis-signals.js";
import { freePort, redisTestService } from "./testing/redis-server.js";

const redis = await redisTestService();
afterAll(() => redis.stop());

const until = async (check: () => boolean, ms = 5_000) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe("redisSignals options", () => {
  it("refuses a bad prefix or timeout with invalid_argument, before connecting", () => {
    for (const options of [
      { prefix: "has space" },
      { prefix: "" },
      { publishTimeoutMs: 0 },
      { fallbackGraceMs: Number.NaN },
    ]) {
      expect(() => redisSignals(options)).toThrow(expect.objectContaining({ code: "invalid_argument" }));
    }
  });
});

describe("without Redis", () => {
  it("subscribes and publishes through the fallback at once when nothing answers", async () => {
    const fallback = inProcessSignals();
    const signals = redisSignals({
      url: `redis://127.0.0.1:${await freePort()}`,
      fallback,
      subscribeTimeoutMs: 200,
    });
    try {
      const got: Signal[] = [];
      const t0 = Date.now();
      await signals.subscribe("work", (s) => got.push(s));
      await signals.publish({ kind: "work", planHash: "p" });
      await signals.publish({ kind: "event", runId: "r", seq: 1, live: { type: "token.delta" } });
      expect(Date.now() - t0).toBeLessThan(3_000);
      expect(got).toEqual([{ kind: "work", planHash: "p" }]);
      expect(signals.stats()).toMatchObject({
        state: "connecting",
        publishedFallback: 1,
        dropped: 1,
        publishedRedis: 0,
      });
    } finally {
      await signals.close();
    }
  });
});

describe.skipIf(!redis.available)(`hostile messages on our channels (${redis.reason})`, () => {
  it("ignores malformed messages and events for another run, and counts them", async () => {
    const prefix = `hostile-${Date.now()}`;
    const signals = redisSignals({ url: redis.url!, prefix });
    const raw = new Redis(redis.url!);
    try {
      await signals.ready();
      const got: Signal[] = [];
      await signals.subscribe("run:a", (s) => got.push(s));
      await signals.subscribe("cancel", (s) => got.push(s));
      for (const [channel, message] of [
        [`${prefix}:run:a`, "not json"],
        [`${prefix}:run:a`, JSON.stringify({ k: "e", r: "b", s: 1 })],
        [`${prefix}:run:a`, JSON.stringify({ k: "e", r: "a", s: "1" })],
        [`${prefix}:run:a`, "null"],
        [`${prefix}:cancel`, JSON.stringify({ k: "c", r: "" })],
        [`${prefix}:cancel`, JSON.stringify({ k: "w" })],
      ] as const)
        await raw.publish(channel, message);
      await raw.publish(`${prefix}:run:a`, JSON.stringify({ k: "e", r: "a", s: 2 }));
      await until(() => got.length >= 1);
      await new Promise((r) => setTimeout(r, 50));
      expect(got).toEqual([{ kind: "event", runId: "a", seq: 2 }]);
      expect(signals.stats().malformed).toBe(6);
    } finally {
      raw.disconnect();
      await signals.close();
    }
  });

  it("delivers a signal once when it arrives through both Redis and the fallback", async () => {
    const fallback = inProcessSignals();
    const prefix = `twins-${Date.now()}`;
    const signals = redisSignals({ url: redis.url!, prefix, fallback, fallbackGraceMs: 200 });
    const raw = new Redis(redis.url!);
    try {
      await signals.ready();
      const got: Signal[] = [];
      await signals.subscribe("run:x", (s) => got.push(s));
      // The fallback copy first (as the store's in-transaction notification is), then Redis's.
      fallback.deliver({ kind: "event", runId: "x", seq: 1 });
      await raw.publish(`${prefix}:run:x`, JSON.stringify({ k: "e", r: "x", s: 1 }));
      // Redis's copy first, then the fallback's.
      await raw.publish(`${prefix}:run:x`, JSON.stringify({ k: "e", r: "x", s: 2 }));
      await until(() => got.length >= 2);
      fallback.deliver({ kind: "event", runId: "x", seq: 2 });
      // A fallback signal with no Redis twin (its publisher lost Redis) comes after the grace.
      fallback.deliver({ kind: "event", runId: "x", seq: 3 });
      await until(() => got.length >= 3);
      await new Promise((r) => setTimeout(r, 300));
      expect(got.map((s) => (s as { seq: number }).seq)).toEqual([1, 2, 3]);
      expect(signals.stats()).toMatchObject({ duplicates: 2, receivedRedis: 2, receivedFallback: 3 });
    } finally {
      raw.disconnect();
      await signals.close();
    }
  });
});
