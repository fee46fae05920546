import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type StoredEvent } from "@openrath/client";
import { afterEach, describe, expect, it } from "vitest";
import { POSTGRES_URL, postgresAvailable, schemaPerFile } from "../testing/postgres.js";
import { spawnSyncOpenrath, startOpenrath } from "../testing/run-cli.js";

// Real processes on real PostgreSQL: an API process killed while clients follow SSE streams, and a
// worker killed while it runs steps. Nothing is missed, nothing is seen twice, every run finishes.

const postgres = await postgresAvailable();
const schema = schemaPerFile("cli_faults", postgres);
const env = {
  DATABASE_URL: POSTGRES_URL ?? "",
  OPENRATH_DB_SCHEMA: schema,
  // A killed worker's runs are taken over within about a second and a half.
  OPENRATH_WORKER_LEASE_MS: "1500",
};
const children: ChildProcess[] = [];
const closers: (() => void)[] = [];
const dirs: string[] = [];

afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const close of closers.splice(0)) close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A loopback TCP proxy whose upstream port can be switched, as a load balancer moves to another replica. */
async function switchProxy(): Promise<{ port: number; to(port: number): void; connections(): number }> {
  let target = 0;
  let connections = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    const upstream = connect(target, "127.0.0.1");
    socket.pipe(upstream).pipe(socket);
    const end = () => {
      socket.destroy();
      upstream.destroy();
      sockets.delete(socket);
    };
    socket.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : 0,
    to: (port) => {
      target = port;
    },
    connections: () => connections,
  };
}

function start(args: string[], ready: RegExp) {
  const running = startOpenrath([...args, "--workflows", "src/testing/fixture-workflows.ts"], ready, env);
  children.push(running.child);
  return running;
}

const API_READY = /OpenRath server on http:\/\/127\.0\.0\.1:(\d+)/;
const WORKER_READY = /OpenRath worker: /;

describe.skipIf(!postgres.available)(`killed processes on PostgreSQL (${postgres.reason})`, () => {
  it("an API process killed mid-stream: followers resume on the other with Last-Event-ID and miss nothing; a killed worker's runs finish on another", async () => {
    const migrated = spawnSyncOpenrath(["migrate"], env);
    expect(migrated.code, migrated.stderr).toBe(0);
    const state = mkdtempSync(join(tmpdir(), "openrath-faults-"));
    dirs.push(state);
    const serving = ["serve", "--port", "0", "--auth", "local", "--no-worker", "--state", state];
    const apiA = start(serving, API_READY);
    const apiB = start(serving, API_READY);
    const worker = start(["worker", "--concurrency", "4", "--state", state], WORKER_READY);
    const [portA, portB] = [Number((await apiA.matched)[1]), Number((await apiB.matched)[1])];
    await worker.matched;
    const proxy = await switchProxy();
    proxy.to(portA);
    const client = createClient({ baseUrl: `http://127.0.0.1:${proxy.port}` });

    const runs = await Promise.all(
      Array.from({ length: 4 }, (_, i) => client.runs.create({ assistant: "ticker", input: `run ${i}` })),
    );
    const followed = runs.map(async (run) => {
      const seen: StoredEvent[] = [];
      for await (const event of client.events.stream(run.id, { reconnect: { retries: 20, minDelayMs: 50 } }))
        if (!event.live) seen.push(event);
      return seen;
    });
    // Mid-way through the runs: both the API process serving the streams and the worker die.
    const sample = runs[0]?.id ?? "";
    for (let i = 0; i < 100; i++) {
      const page = await client.events.list(sample, {});
      if (page.items.filter((event) => event.type === "tick").length >= 3) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const before = proxy.connections();
    apiA.child.kill("SIGKILL");
    worker.child.kill("SIGKILL");
    proxy.to(portB);
    expect(await apiA.exited).toBeNull();
    const replacement = start(["worker", "--concurrency", "4", "--state", state], WORKER_READY);
    await replacement.matched;

    const streams = await Promise.all(followed);
    expect(proxy.connections()).toBeGreaterThan(before);
    // The killed worker was mid-step: the replacement ran some step again from its start, so a tick
    // of the first attempt shows twice (both stored, both seen).
    const repeated = streams.some((seen) => {
      const ticks = seen.filter((event) => event.type === "tick").map((event) => JSON.stringify(event.data));
      return new Set(ticks).size < ticks.length;
    });
    expect(repeated).toBe(true);
    for (const [i, run] of runs.entries()) {
      const seen = streams[i] ?? [];
      const done = await client.runs.get(run.id);
      expect(done.status, `run ${run.id}`).toBe("succeeded");
      // Every stored event, in order, exactly once: what the stream showed is what the store holds.
      const stored: number[] = [];
      for await (const event of client.events.listAll(run.id)) stored.push(event.sequence);
      expect(seen.map((event) => event.sequence)).toEqual(stored);
      expect(stored).toEqual(Array.from({ length: stored.length }, (_, n) => n + 1));
      const session = await client.runs.session(run.id);
      expect((session.chunks as { content?: string }[]).map((chunk) => chunk.content)).toEqual([
        `run ${i}`,
        "one done",
        "two done",
        "three done",
      ]);
    }
    replacement.child.kill("SIGTERM");
    expect(await replacement.exited).toBe(0);
    apiB.child.kill("SIGTERM");
    expect(await apiB.exited).toBe(0);
  }, 180_000);
});
