import { randomBytes } from "node:crypto";
import { serviceAvailable } from "@openrath/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redisSignals } from "./redis-signals.js";
import { freePort, haveRedisServer, type RedisProcess, startRedis } from "./testing/redis-server.js";

const SECRET = `Pw-${randomBytes(6).toString("hex")}`;
// A server of this test's own, started with a password (the shared test server has none).
const server = await serviceAvailable("redis-server", () => {
  if (!haveRedisServer()) throw new Error("redis-server is not installed (see tooling/scripts/services.mjs)");
  return true;
});

type Coded = Error & { code?: string; details?: Record<string, unknown> };

function expectNoSecret(error: unknown, secret = SECRET) {
  let at: unknown = error;
  for (let depth = 0; at !== undefined && at !== null && depth < 10; depth++) {
    const e = at as Coded;
    expect(String(e.message), `message at depth ${depth}`).not.toContain(secret);
    expect(String(e), `text at depth ${depth}`).not.toContain(secret);
    expect(JSON.stringify(e.details ?? {}), `details at depth ${depth}`).not.toContain(secret);
    at = e.cause;
  }
}

/** The error `ready()` of signals on `url` fails with; the signals are closed afterwards. */
async function readyError(url: string, timeoutMs = 300): Promise<Coded> {
  const signals = redisSignals({ url, maxReconnectDelayMs: 50 });
  try {
    await signals.ready({ timeoutMs });
  } catch (error) {
    expectNoSecret(error);
    return error as Coded;
  } finally {
    await signals.close();
  }
  throw new Error(`signals on ${url} became ready`);
}

describe("a malformed url is invalid_argument, before anything connects", () => {
  it.each([
    ["not a URL", "not a url"],
    ["an empty string", ""],
    ["a port out of range", `redis://u:${SECRET}@127.0.0.1:99999`],
    ["port zero", `redis://u:${SECRET}@127.0.0.1:0`],
    ["an http URL", `http://u:${SECRET}@127.0.0.1:6379`],
    ["a database that is not a number", `redis://u:${SECRET}@127.0.0.1:6379/jobs`],
    ["user and password without a scheme", `u:${SECRET}@127.0.0.1:6379`],
  ])("%s", (_, url) => {
    let caught: unknown;
    try {
      redisSignals({ url }).close();
    } catch (error) {
      caught = error;
    }
    const error = caught as Coded;
    expect(error?.code).toBe("invalid_argument");
    expectNoSecret(error);
    if (url.includes("@")) expect(error.message).toContain("u:***@");
    expect(error.message).not.toMatch(/Invalid URL|ENOTFOUND/);
  });
});

describe("Redis that is not there", () => {
  it("ready() fails with store_unavailable, reason unreachable, naming the URL without its password", async () => {
    const port = await freePort();
    const error = await readyError(`redis://user:${SECRET}@127.0.0.1:${port}/0`);
    expect(error.code).toBe("store_unavailable");
    expect(error.details).toMatchObject({
      reason: "unreachable",
      retryable: true,
      url: `redis://user:***@127.0.0.1:${port}/0`,
    });
    expect(error.message).toContain(`redis://user:***@127.0.0.1:${port}/0`);
    expect(error.message).toContain("ECONNREFUSED");
  });

  it("without a url, the message names the redis options' host and port", async () => {
    const port = await freePort();
    const signals = redisSignals({ redis: { host: "127.0.0.1", port, password: SECRET } });
    const error = (await signals.ready({ timeoutMs: 200 }).catch((e) => e)) as Coded;
    await signals.close();
    expectNoSecret(error);
    expect(error.details).toMatchObject({ url: `redis://127.0.0.1:${port}`, reason: "unreachable" });
  });
});

describe.skipIf(!server.available)(`a Redis that asks for a password (${server.reason})`, () => {
  let protectedRedis: RedisProcess;
  beforeAll(async () => {
    protectedRedis = await startRedis({ args: ["--requirepass", SECRET] });
  });
  afterAll(() => protectedRedis?.stop());

  it("the right password makes the signals ready (the server is real and checks passwords)", async () => {
    const signals = redisSignals({ url: `redis://:${SECRET}@127.0.0.1:${protectedRedis.port}` });
    await signals.ready();
    await signals.close();
  });

  it("a wrong password is store_unavailable, reason authentication_failed, at once and without the password", async () => {
    const wrong = `${SECRET}-wrong`;
    const error = await readyError(`redis://:${wrong}@127.0.0.1:${protectedRedis.port}`, 20_000);
    expectNoSecret(error, wrong);
    expect(error.code).toBe("store_unavailable");
    expect(error.details).toMatchObject({ reason: "authentication_failed", retryable: false });
    expect(error.message).toContain(`redis://:***@127.0.0.1:${protectedRedis.port}`);
  });

  it("no password is store_unavailable, reason authentication_failed", async () => {
    const error = await readyError(`redis://127.0.0.1:${protectedRedis.port}`, 20_000);
    expect(error.details).toMatchObject({ reason: "authentication_failed" });
  });
});
