import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { serverHarness } from "./testing/harness.js";

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
