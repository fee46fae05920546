import { randomUUID } from "node:crypto";
import { createDurableRuntime } from "@openrath/runtime-durable";
import { postgresStore } from "@openrath/store-postgres";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { createServer } from "./server.js";
import { cuttableProxy } from "./testing/cuttable-proxy.js";
import { echo } from "./testing/harness.js";
import { POSTGRES_URL, postgresAvailable } from "./testing/postgres.js";

const postgres = await postgresAvailable();

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.skipIf(!postgres.available)(`PostgreSQL going down (${postgres.reason})`, () => {
  it("turns readiness to 503 and refuses new runs with a coded error — never a false success — and recovers", async () => {
    const url = new URL(POSTGRES_URL ?? "");
    const proxy = await cuttableProxy({ host: url.hostname, port: Number(url.port || 5432) });
    cleanups.push(() => proxy.close());
    url.hostname = "127.0.0.1";
    url.port = String(proxy.port);
    const schema = `server_faults_${randomUUID().slice(0, 8)}`;
    const store = await postgresStore({ connectionString: url.toString(), schema, migrate: true });
    const runtime = createDurableRuntime({ store });
    cleanups.push(async () => {
      await runtime.close().catch(() => {});
      const admin = new pg.Client({ connectionString: POSTGRES_URL });
      await admin.connect();
      await admin.query(`drop schema if exists ${schema} cascade`);
      await admin.end();
    });
    await runtime.register(echo);
    await runtime.worker({ concurrency: 2 }).start();
    const app = await createServer({ runtime, auth: { mode: "local" } });
    cleanups.push(() => app.close());

    expect((await app.inject({ method: "GET", url: "/health/ready" })).statusCode).toBe(200);
    const before = await app.inject({
      method: "POST",
      url: "/v1/runs",
      payload: { assistant: "echo", input: "up" },
    });
    expect(before.statusCode).toBe(201);

    await proxy.cut();
    const ready = await app.inject({ method: "GET", url: "/health/ready" });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toEqual({ status: "not_ready", checks: { store: "failed" } });
    const refused = await app.inject({
      method: "POST",
      url: "/v1/runs",
      payload: { assistant: "echo", input: "down" },
    });
    expect(refused.statusCode).toBeGreaterThanOrEqual(500);
    expect(refused.json().error.code).toBe("store_unavailable");
    expect(refused.statusCode).toBe(503);
    const read = await app.inject({ method: "GET", url: `/v1/runs/${before.json().id}` });
    expect(read.statusCode).toBeGreaterThanOrEqual(500);
    expect((await app.inject({ method: "GET", url: "/health/live" })).statusCode).toBe(200);

    await proxy.restore();
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await app.inject({ method: "GET", url: "/health/ready" })).statusCode;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(200);
    const after = await app.inject({
      method: "POST",
      url: "/v1/runs",
      payload: { assistant: "echo", input: "back" },
    });
    expect(after.statusCode).toBe(201);
    const done = await runtime.wait(after.json().id);
    expect(done.status).toBe("succeeded");
    // The refused submission left nothing behind: only the two accepted runs exist.
    const runs = await runtime.listRuns();
    expect(runs.map((run) => run.id).sort()).toEqual([before.json().id, after.json().id].sort());
  });
});
