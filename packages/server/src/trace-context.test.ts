import { describe, expect, it } from "vitest";
import { serverHarness } from "./testing/harness.js";

const harness = serverHarness();
const TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

describe("W3C trace context on POST /v1/runs", () => {
  it("stores the caller's traceparent and tracestate with the run and returns them (field and traceresponse header)", async () => {
    const { app, runtime } = await harness.setup();
    const created = await app.inject({
      method: "POST",
      url: "/v1/runs",
      headers: { traceparent: TRACEPARENT, tracestate: "vendor=abc" },
      payload: { assistant: "echo", input: "hi" },
    });
    expect(created.statusCode).toBe(201);
    expect(created.headers.traceresponse).toBe(TRACEPARENT);
    const run = created.json();
    expect(run.traceContext).toEqual({ traceparent: TRACEPARENT, tracestate: "vendor=abc" });
    expect((await runtime.wait(run.id)).status).toBe("succeeded");
    const read = await app.inject({ method: "GET", url: `/v1/runs/${run.id}` });
    expect(read.json().traceContext).toEqual({ traceparent: TRACEPARENT, tracestate: "vendor=abc" });
  });

  it("ignores a malformed traceparent (the run starts without a trace) and a run without one has no trace context", async () => {
    const { app } = await harness.setup();
    for (const headers of [
      { traceparent: "00-0000-bad-01" },
      { traceparent: TRACEPARENT.replace("4bf9", "4BF9") },
      {},
    ]) {
      const created = await app.inject({
        method: "POST",
        url: "/v1/runs",
        headers,
        payload: { assistant: "echo", input: "hi" },
      });
      expect(created.statusCode).toBe(201);
      expect(created.json().traceContext).toBeUndefined();
      expect(created.headers.traceresponse).toBeUndefined();
    }
  });
});
