import type { AddressInfo } from "node:net";
import type { AccessStoreV1 } from "@openrath/runtime-durable/store";
import { describe, expect, it, vi } from "vitest";
import { bearer, mint, serverHarness } from "./testing/harness.js";

const harness = serverHarness();

interface Frame {
  id?: string;
  event?: string;
  data?: string;
}

/** Reads an SSE response to its end into frames. */
async function readFrames(response: Response): Promise<Frame[]> {
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((block) => block.trim() !== "" && !block.startsWith(":"))
    .map((block) => {
      const frame: Frame = {};
      for (const line of block.split("\n")) {
        const at = line.indexOf(": ");
        const key = line.slice(0, at) as keyof Frame;
        if (key === "id" || key === "event" || key === "data") frame[key] = line.slice(at + 2);
      }
      return frame;
    });
}

describe("events over HTTP", () => {
  it("pages a run's stored events by sequence with no gap", async () => {
    const { app, runtime } = await harness.setup();
    const run = (
      await app.inject({ method: "POST", url: "/v1/runs", payload: { assistant: "echo", input: "hi" } })
    ).json();
    await runtime.wait(run.id);
    const all = (await app.inject({ method: "GET", url: `/v1/runs/${run.id}/events` })).json();
    const sequences = all.items.map((event: { sequence: number }) => event.sequence);
    expect(sequences).toEqual(sequences.map((_: number, i: number) => i + 1));
    expect(all.items.at(0).type).toBe("run.created");
    const firstPage = (await app.inject({ method: "GET", url: `/v1/runs/${run.id}/events?limit=2` })).json();
    expect(firstPage.next).toBe("2");
    const rest = (
      await app.inject({ method: "GET", url: `/v1/runs/${run.id}/events?after=${firstPage.next}` })
    ).json();
    expect([...firstPage.items, ...rest.items].map((event: { sequence: number }) => event.sequence)).toEqual(
      sequences,
    );
  });

  it("streams events as SSE with id = sequence, and a reconnect with Last-Event-ID continues with no gap and no repeat", async () => {
    const { app, runtime } = await harness.setup();
    await app.listen({ port: 0, host: "127.0.0.1" });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const run = (
      await app.inject({ method: "POST", url: "/v1/runs", payload: { assistant: "approval", input: "go" } })
    ).json();
    // Up to the park: the stream ends there with parked=true.
    const parked = await fetch(`${base}/v1/runs/${run.id}/stream?parked=true`);
    expect(parked.headers.get("content-type")).toContain("text/event-stream");
    const before = await readFrames(parked);
    expect(before.at(-1)?.event).toBe("run.interrupt.created");
    expect((await runtime.get(run.id))?.status).toBe("waiting");
    const lastId = before.at(-1)?.id ?? "";
    // Decide, then reconnect from the last id seen: only the events after it, to the end of the run.
    const inbox = (await app.inject({ method: "GET", url: "/v1/interrupts" })).json();
    await app.inject({
      method: "POST",
      url: `/v1/interrupts/${inbox.items[0].id}/decision`,
      payload: { kind: "approve" },
    });
    const resumed = await fetch(`${base}/v1/runs/${run.id}/stream`, { headers: { "Last-Event-ID": lastId } });
    const after = await readFrames(resumed);
    const ids = [...before, ...after].map((frame) => Number(frame.id));
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    const done = await runtime.get(run.id);
    expect(ids.at(-1)).toBe(done?.eventSeq);
    expect(JSON.parse(after.at(-1)?.data ?? "{}").data).toMatchObject({ to: "succeeded" });
  });

  it("refuses a Last-Event-ID that is not a sequence", async () => {
    const { app } = await harness.setup();
    const run = (
      await app.inject({ method: "POST", url: "/v1/runs", payload: { assistant: "echo", input: "hi" } })
    ).json();
    const response = await app.inject({
      method: "GET",
      url: `/v1/runs/${run.id}/stream`,
      headers: { "last-event-id": "abc" },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.code).toBe("invalid_request");
  });
});

describe("streams of a run the server follows already", () => {
  it("join with no read of the run in the follower's project, while another project's token is still not found and a follower ending at a park reads the run", async () => {
    const { app, runtime } = await harness.setup({ auth: { mode: "tokens" } });
    await app.listen({ port: 0, host: "127.0.0.1" });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const access = runtime.store.access as AccessStoreV1;
    const alpha = bearer(await mint(access, { projectId: "alpha", grants: ["run.*", "event.read"] }));
    const beta = bearer(await mint(access, { projectId: "beta", grants: ["run.*", "event.read"] }));
    const admin = bearer(await mint(access, { grants: ["*"] }));
    const run = (
      await app.inject({
        method: "POST",
        url: "/v1/runs",
        headers: alpha,
        payload: { assistant: "approval", input: "go" },
      })
    ).json();
    const parked = await runtime.wait(run.id, { onPark: "return" });
    const store = runtime.store;
    const getRun = store.getRun.bind(store);
    let runReads = 0;
    store.getRun = (...args) => {
      runReads++;
      return getRun(...args);
    };
    const first = await fetch(`${base}/v1/runs/${run.id}/stream`, { headers: alpha });
    // The route's read, and the shared follow's check of the run when it starts.
    await vi.waitFor(() => expect(runReads).toBeGreaterThanOrEqual(2));
    const afterFirst = runReads;
    const second = await fetch(`${base}/v1/runs/${run.id}/stream?after=2`, { headers: alpha });
    expect(second.status).toBe(200);
    expect(runReads).toBe(afterFirst);
    const other = await fetch(`${base}/v1/runs/${run.id}/stream`, { headers: beta });
    expect(other.status).toBe(404);
    expect(((await other.json()) as { error: { code: string } }).error.code).toBe("run_not_found");
    // The run is parked: a follower ending at a park reads it and ends at once.
    const atPark = await fetch(`${base}/v1/runs/${run.id}/stream?parked=true&after=${parked.eventSeq}`, {
      headers: alpha,
    });
    expect(await readFrames(atPark)).toEqual([]);
    const inbox = (await app.inject({ method: "GET", url: "/v1/interrupts", headers: admin })).json();
    await app.inject({
      method: "POST",
      url: `/v1/interrupts/${inbox.items[0].id}/decision`,
      headers: admin,
      payload: { kind: "approve" },
    });
    const done = await runtime.wait(run.id);
    const ids = async (response: Response) => (await readFrames(response)).map((frame) => Number(frame.id));
    const all = Array.from({ length: done.eventSeq }, (_, i) => i + 1);
    expect(await ids(first)).toEqual(all);
    expect(await ids(second)).toEqual(all.slice(2));
  });
});

describe("closing the server", () => {
  it("ends open streams, so close() does not wait on a follower of a run that is still waiting", async () => {
    const { app, runtime } = await harness.setup();
    await app.listen({ port: 0, host: "127.0.0.1" });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const run = (
      await app.inject({ method: "POST", url: "/v1/runs", payload: { assistant: "approval", input: "go" } })
    ).json();
    await runtime.wait(run.id, { onPark: "return" });
    const response = await fetch(`${base}/v1/runs/${run.id}/stream`);
    const body = response.text();
    await app.close();
    // The stream ended with the events so far; the run is still waiting for its decision.
    expect(await body).toContain("run.interrupt.created");
    expect((await runtime.get(run.id))?.status).toBe("waiting");
  });
});
