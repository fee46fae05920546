import type { ChildProcess } from "node:child_process";
import { connect, createServer, type Server, type Socket } from "node:net";
import { createDurableRuntime } from "@openrath/runtime-durable";
import { pgliteStore } from "@openrath/store-postgres";
import { afterEach, describe, expect, it } from "vitest";
import { greet } from "../testing/fixture-workflows.js";
import { POSTGRES_URL, postgresAvailable, schemaPerFile } from "../testing/postgres.js";
import { spawnOpenrath, startOpenrath } from "../testing/run-cli.js";
import { watchWorkerHealth } from "./worker-health.js";

const pg = await postgresAvailable();
const schema = schemaPerFile("worker_health", pg);
const children: ChildProcess[] = [];
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/**
 * A TCP relay to PostgreSQL that can be cut (listener closed, connections reset) and restored on
 * the same port: the database becomes unreachable for the worker and comes back.
 */
async function relay(target: URL) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const open = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = connect({ host: target.hostname, port: Number(target.port || 5432) });
        sockets.add(client).add(upstream);
        client.pipe(upstream).pipe(client);
        const drop = () => {
          client.destroy();
          upstream.destroy();
        };
        client.on("error", drop).on("close", drop);
        upstream.on("error", drop).on("close", drop);
      });
      server.listen(port, "127.0.0.1", () => {
        const address = server?.address();
        if (typeof address === "object" && address) port = address.port;
        resolve();
      });
    });
  const cut = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      if (server) server.close(() => resolve());
      else resolve();
    });
  await open();
  cleanups.push(cut);
  return { port: () => port, cut, restore: open };
}

/** Polls `url` until its status is `status`; returns the last body. */
async function untilStatus(url: string, status: number): Promise<Record<string, unknown>> {
  for (let i = 0; ; i++) {
    const response = await fetch(url).catch(() => undefined);
    if (response?.status === status) return (await response.json()) as Record<string, unknown>;
    if (i > 300) throw new Error(`${url} never answered ${status} (last ${response?.status})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.skipIf(!pg.available)("openrath worker's health endpoint on PostgreSQL", () => {
  it("is live and ready while the worker runs, not ready (still live) while PostgreSQL is unreachable, ready again after, and closed when the worker exits", async () => {
    const target = new URL(POSTGRES_URL ?? "");
    const db = await relay(target);
    const url = new URL(target);
    url.port = String(db.port());
    url.hostname = "127.0.0.1";
    const env = {
      DATABASE_URL: url.href,
      OPENRATH_DB_SCHEMA: schema,
      OPENRATH_WORKER_HEALTH_PORT: "0",
      OPENRATH_WORKER_LEASE_MS: "1500",
      OPENRATH_LOG_LEVEL: "silent",
    };
    // Not spawnSync: the relay runs on this event loop.
    expect((await spawnOpenrath(["migrate"], env)).code).toBe(0);
    const worker = startOpenrath(
      ["worker", "--workflows", "src/testing/fixture-workflows.ts"],
      /health +(http:\/\/127\.0\.0\.1:\d+)\/health\/live[\s\S]*OpenRath worker:/,
      env,
    );
    children.push(worker.child);
    const base = (await worker.matched)[1];
    const ready = await untilStatus(`${base}/health/ready`, 200);
    expect(ready).toEqual({
      status: "ready",
      checks: { heartbeat: "ok", started: "ok", store: "ok" },
    });
    expect(await (await fetch(`${base}/health/live`)).json()).toEqual({ status: "ok" });
    // The worker's own metrics on the same port: its claims to the store so far.
    const scraped = await fetch(`${base}/metrics`);
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get("content-type")).toContain("text/plain; version=0.0.4");
    expect(await scraped.text()).toMatch(/^openrath_worker_claim_duration_count\{[^}]*\} [1-9]\d*$/m);

    await db.cut();
    const down = await untilStatus(`${base}/health/ready`, 503);
    expect(down).toMatchObject({ status: "not_ready", checks: { store: "failed", heartbeat: "ok" } });
    expect(down.storeError).toBe("store_unavailable");
    // A restart does not bring the database back: liveness stays 200 through the outage.
    expect((await fetch(`${base}/health/live`)).status).toBe(200);

    await db.restore();
    expect((await untilStatus(`${base}/health/ready`, 200)).status).toBe("ready");
    expect((await fetch(`${base}/health/nothing`)).status).toBe(404);

    worker.child.kill("SIGTERM");
    expect(await worker.exited).toBe(0);
    await expect(fetch(`${base}/health/live`)).rejects.toThrow();
  });
});

describe("watchWorkerHealth", () => {
  it("answers live 503 once the worker's heartbeat stops ticking, and closes with the store", async () => {
    const lines: string[] = [];
    const store = await watchWorkerHealth(await pgliteStore(), {
      port: 0,
      host: "127.0.0.1",
      staleMs: 1000,
      write: (line) => lines.push(line),
    });
    const runtime = createDurableRuntime({ store });
    cleanups.push(() => runtime.close());
    await runtime.register(greet);
    const base = /(http:\/\/127\.0\.0\.1:\d+)/.exec(lines.join(""))?.[1];
    expect(base).toBeDefined();
    // Not started yet: live (the watch just began), not ready.
    expect((await untilStatus(`${base}/health/ready`, 503)).checks).toMatchObject({ started: "failed" });
    const worker = runtime.worker({ leaseMs: 300, log: () => {} });
    await worker.start();
    await untilStatus(`${base}/health/ready`, 200);
    expect((await fetch(`${base}/health/live`)).status).toBe(200);
    // No metrics given to the watch: no /metrics.
    expect((await fetch(`${base}/metrics`)).status).toBe(404);

    await worker.stop();
    const stalled = await untilStatus(`${base}/health/live`, 503);
    expect(stalled.status).toBe("stalled");
    expect((await untilStatus(`${base}/health/ready`, 503)).checks).toMatchObject({ heartbeat: "failed" });

    await runtime.close();
    await expect(fetch(`${base}/health/live`)).rejects.toThrow();
  });
});
