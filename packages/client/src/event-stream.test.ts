import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { createClient } from "./create-client.js";
import type { StoredEvent, StreamEvent } from "./event-stream.js";
import { OpenRathApiError } from "./openrath-api-error.js";
import { cuttingProxy } from "./testing/cutting-proxy.js";
import { serverPerFile, TICKS } from "./testing/server.js";

const server = serverPerFile();

const stored = (events: StreamEvent[]): StoredEvent[] => events.filter((event) => !event.live);
const sequences = (events: StreamEvent[]) => stored(events).map((event) => event.sequence);
const oneToN = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe("events.stream", () => {
  it("yields every stored event once in sequence order, the live ones among them, and ends with the run", async () => {
    const client = createClient({ baseUrl: server().baseUrl });
    const run = await client.runs.create({ assistant: "chatty", input: "talk" });
    const events: StreamEvent[] = [];
    for await (const event of client.events.stream(run.id)) events.push(event);
    const done = await client.runs.get(run.id);
    expect(done.status).toBe("succeeded");
    expect(sequences(events)).toEqual(oneToN(done.lastEventSequence));
    expect(stored(events).filter((event) => event.type === "tick")).toHaveLength(TICKS);
    expect(stored(events).at(-1)?.data).toMatchObject({ to: "succeeded" });
    const live = events.filter((event) => event.live);
    expect(live.length).toBeGreaterThan(0);
    expect(live[0]).toMatchObject({ live: true, runId: run.id, type: "token.delta" });
    // The paged events are the same stored events.
    const paged = await client.events.list(run.id, { limit: 1000 });
    expect(stored(events).map(({ live: _, ...event }) => event)).toEqual(paged.items);
  });

  it("resumes with Last-Event-ID after a proxy cuts the connection mid-frame: events 1..N, none twice", async () => {
    const proxy = await cuttingProxy(server().baseUrl, 3);
    try {
      const client = createClient({ baseUrl: proxy.baseUrl });
      const run = await client.runs.create({ assistant: "chatty", input: "talk" });
      const events: StreamEvent[] = [];
      for await (const event of client.events.stream(run.id, { reconnect: { minDelayMs: 10 } })) {
        events.push(event);
      }
      const done = await client.runs.get(run.id);
      expect(done.status).toBe("succeeded");
      expect(sequences(events)).toEqual(oneToN(done.lastEventSequence));
      expect(stored(events).some((event) => event.type === "made.up")).toBe(false);
      expect(proxy.lastEventIds).toEqual([undefined, "3"]);
    } finally {
      await proxy.close();
    }
  });

  it("resumes after the server closes every connection mid-run, with no gap and no repeat", async () => {
    const { app } = server();
    const client = createClient({ baseUrl: server().baseUrl });
    const run = await client.runs.create({ assistant: "chatty", input: "talk" });
    const events: StreamEvent[] = [];
    let dropped = false;
    for await (const event of client.events.stream(run.id, { reconnect: { minDelayMs: 10 } })) {
      events.push(event);
      if (!dropped && !event.live && event.type === "tick") {
        dropped = true;
        app.server.closeAllConnections();
      }
    }
    const done = await client.runs.get(run.id);
    expect(dropped).toBe(true);
    expect(sequences(events)).toEqual(oneToN(done.lastEventSequence));
  });

  it("starts after `after`, and stops at a park with `parked: true`", async () => {
    const client = createClient({ baseUrl: server().baseUrl });
    const run = await client.runs.create({ assistant: "approval", input: "go" });
    const parked: StreamEvent[] = [];
    for await (const event of client.events.stream(run.id, { parked: true })) parked.push(event);
    expect(stored(parked).at(-1)?.type).toBe("run.interrupt.created");
    expect((await client.runs.get(run.id)).status).toBe("waiting");
    const later: StreamEvent[] = [];
    for await (const event of client.events.stream(run.id, { parked: true, after: 2 })) later.push(event);
    expect(sequences(later)).toEqual(sequences(parked).slice(2));
  });

  it("throws a refusal at once, without reconnecting", async () => {
    const client = createClient({ baseUrl: server().baseUrl });
    const started = Date.now();
    const error = await (async () => {
      for await (const _ of client.events.stream("no-such-run")) {
        // nothing arrives
      }
    })().catch((caught: unknown) => caught);
    expect(OpenRathApiError.isInstance(error, "run_not_found")).toBe(true);
    expect((error as OpenRathApiError).status).toBe(404);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("stops when the signal fires, with the signal's reason", async () => {
    const client = createClient({ baseUrl: server().baseUrl });
    const run = await client.runs.create({ assistant: "approval", input: "wait" });
    const controller = new AbortController();
    const reason = new Error("enough");
    const seen: StreamEvent[] = [];
    const error = await (async () => {
      for await (const event of client.events.stream(run.id, { signal: controller.signal })) {
        seen.push(event);
        if (!event.live && event.type === "run.interrupt.created") controller.abort(reason);
      }
    })().catch((caught: unknown) => caught);
    expect(error).toBe(reason);
    expect(seen.length).toBeGreaterThan(0);
    await client.runs.cancel(run.id);
  });

  it("gives up after `retries` failed reconnections in a row, with the last error", async () => {
    const gone = createServer();
    await new Promise<void>((resolve) => gone.listen(0, "127.0.0.1", resolve));
    const { port } = gone.address() as AddressInfo;
    await new Promise((resolve) => gone.close(resolve));
    let attempts = 0;
    const client = createClient({
      baseUrl: `http://127.0.0.1:${port}`,
      fetch: (request) => {
        attempts++;
        return fetch(request);
      },
    });
    const error = await (async () => {
      for await (const _ of client.events.stream("r", { reconnect: { retries: 3, minDelayMs: 5 } })) {
        // nothing arrives
      }
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TypeError);
    expect(attempts).toBe(4);
  });

  it("throws the connection's error at the first drop with `reconnect: false`", async () => {
    const proxy = await cuttingProxy(server().baseUrl, 2);
    try {
      const client = createClient({ baseUrl: proxy.baseUrl });
      const run = await client.runs.create({ assistant: "chatty", input: "talk" });
      const seen: StreamEvent[] = [];
      const error = await (async () => {
        for await (const event of client.events.stream(run.id, { reconnect: false })) seen.push(event);
      })().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(TypeError);
      expect(sequences(seen)).toEqual([1, 2]);
      expect(proxy.lastEventIds).toHaveLength(1);
    } finally {
      await proxy.close();
    }
  });
});
