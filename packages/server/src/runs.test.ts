import { describe, expect, it } from "vitest";
import { serverHarness } from "./testing/harness.js";

const harness = serverHarness();

describe("runs over HTTP", () => {
  it("starts a run of a workflow by name, reads it until it succeeds, and lists it", async () => {
    const { app, runtime } = await harness.setup();
    const created = await app.inject({
      method: "POST",
      url: "/v1/runs",
      payload: { assistant: "echo", input: "hi" },
    });
    expect(created.statusCode).toBe(201);
    const run = created.json();
    expect(run).toMatchObject({ workflow: "echo", tenantId: "default", projectId: null });
    await runtime.wait(run.id);
    const read = await app.inject({ method: "GET", url: `/v1/runs/${run.id}` });
    expect(read.json()).toMatchObject({ id: run.id, status: "succeeded" });
    const session = await app.inject({ method: "GET", url: `/v1/runs/${run.id}/session` });
    const chunks = session.json().chunks as { kind: string; content: string }[];
    expect(chunks.at(-1)).toMatchObject({ kind: "assistant", content: "echo: hi" });
    const list = await app.inject({ method: "GET", url: "/v1/runs?status=succeeded" });
    expect(list.json().items.map((item: { id: string }) => item.id)).toEqual([run.id]);
  });

  it("an Idempotency-Key answers a repeated request with the first run, and a different body under it is a conflict", async () => {
    const { app } = await harness.setup();
    const send = (input: string) =>
      app.inject({
        method: "POST",
        url: "/v1/runs",
        headers: { "idempotency-key": "order-42" },
        payload: { assistant: "echo", input },
      });
    const first = await send("hello");
    const again = await send("hello");
    expect(again.json().id).toBe(first.json().id);
    const other = await send("something else");
    expect(other.statusCode).toBe(409);
    expect(other.json().error.code).toBe("idempotency_conflict");
  });

  it("pages runs newest first with a cursor: each run once, none created meanwhile, then next is null; order=asc pages oldest first", async () => {
    const { app, runtime } = await harness.setup();
    const create = async (input: string) => {
      const created = await app.inject({
        method: "POST",
        url: "/v1/runs",
        payload: { assistant: "echo", input },
      });
      await runtime.wait(created.json().id);
      return created.json().id as string;
    };
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await create(`n${i}`));
    const pages = async (order: string, during?: () => Promise<unknown>) => {
      const seen: string[][] = [];
      let next: string | null = null;
      do {
        const query: string = `${order ? `&order=${order}` : ""}${next ? `&after=${next}` : ""}`;
        const response = await app.inject({ method: "GET", url: `/v1/runs?limit=2${query}` });
        expect(response.statusCode).toBe(200);
        const body = response.json();
        seen.push(body.items.map((item: { id: string }) => item.id));
        next = body.next;
        if (seen.length === 1) await during?.();
      } while (next);
      return seen;
    };
    const made: string[] = [];
    const newestFirst = await pages("", async () => made.push(await create("meanwhile")));
    expect(newestFirst).toEqual([ids.slice(3).reverse(), ids.slice(1, 3).reverse(), ids.slice(0, 1)]);
    expect(await pages("desc")).toEqual([
      [made[0], ids[4]],
      [ids[3], ids[2]],
      [ids[1], ids[0]],
    ]);
    expect((await pages("asc")).flat()).toEqual([...ids, made[0]]);
    const bad = await app.inject({ method: "GET", url: "/v1/runs?order=sideways" });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe("invalid_request");
  });

  it("forks a new run from a checkpoint of another run, with the message appended (time travel)", async () => {
    const { app, runtime } = await harness.setup();
    const first = (
      await app.inject({ method: "POST", url: "/v1/runs", payload: { assistant: "echo", input: "one" } })
    ).json();
    await runtime.wait(first.id);
    const forked = await app.inject({
      method: "POST",
      url: "/v1/runs",
      payload: { assistant: "echo", from: { runId: first.id, sequence: 0 }, input: "two" },
    });
    expect(forked.statusCode).toBe(201);
    await runtime.wait(forked.json().id);
    const session = (await app.inject({ method: "GET", url: `/v1/runs/${forked.json().id}/session` })).json();
    const texts = (session.chunks as { content: string }[]).map((chunk) => chunk.content);
    expect(texts).toEqual(["one", "two", "echo: two"]);
    // The fork is recorded in the lineage: the new session's own node is a fork of the first run's session.
    expect(session.lineage[0]).toMatchObject({ op: "fork" });
    expect(session.id).not.toBe(first.sessionId);
  });

  it("forks a rewound session: the first chunks of a checkpoint, then another message in place of the rest", async () => {
    const { app, runtime } = await harness.setup();
    const first = (
      await app.inject({ method: "POST", url: "/v1/runs", payload: { assistant: "echo", input: "one" } })
    ).json();
    await runtime.wait(first.id);
    const rewound = await app.inject({
      method: "POST",
      url: "/v1/runs",
      payload: { assistant: "echo", from: { runId: first.id, keepChunks: 0 }, input: "instead" },
    });
    expect(rewound.statusCode, rewound.body).toBe(201);
    await runtime.wait(rewound.json().id);
    const session = (
      await app.inject({ method: "GET", url: `/v1/runs/${rewound.json().id}/session` })
    ).json();
    expect((session.chunks as { content: string }[]).map((chunk) => chunk.content)).toEqual([
      "instead",
      "echo: instead",
    ]);
    const fork = (session.lineage as { op: string; extras?: Record<string, unknown> }[]).find(
      (node) => node.extras?.["rewind.kept"] !== undefined,
    );
    expect(fork).toMatchObject({ op: "fork", extras: { "rewind.kept": 0, "rewind.dropped": 2 } });
    // The source run's session is untouched.
    const source = (await app.inject({ method: "GET", url: `/v1/runs/${first.id}/session` })).json();
    expect((source.chunks as { content: string }[]).map((chunk) => chunk.content)).toEqual([
      "one",
      "echo: one",
    ]);
  });

  it("cancels a waiting run; cancelling it again is a conflict", async () => {
    const { app, runtime } = await harness.setup();
    const run = (
      await app.inject({ method: "POST", url: "/v1/runs", payload: { assistant: "approval", input: "go" } })
    ).json();
    await runtime.wait(run.id, { onPark: "return" });
    const cancelled = await app.inject({
      method: "POST",
      url: `/v1/runs/${run.id}/cancel`,
      payload: { reason: "not today" },
    });
    expect(cancelled.json()).toMatchObject({ status: "cancelled" });
    const again = await app.inject({ method: "POST", url: `/v1/runs/${run.id}/cancel`, payload: {} });
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe("invalid_transition");
  });

  it("answers bad input with the error envelope and a stable code, and writes nothing", async () => {
    const { app, runtime } = await harness.setup();
    const cases = [
      { payload: { assistant: "echo" }, code: "invalid_request" },
      { payload: { assistant: "echo", input: "x", extra: 1 }, code: "invalid_request" },
      { payload: { assistant: "echo", input: "x", priority: 1000 }, code: "invalid_request" },
      { payload: { assistant: "no-such-workflow", input: "x" }, code: "unknown_plan" },
      { payload: { assistant: "echo", session: { chunks: "nope" } }, code: "invalid_request" },
    ];
    for (const { payload, code } of cases) {
      const response = await app.inject({ method: "POST", url: "/v1/runs", payload });
      const body = response.json();
      expect(body.error.code, JSON.stringify(payload)).toBe(code);
      expect(body.error.requestId).toBe(response.headers["x-request-id"]);
    }
    expect(await runtime.listRuns()).toEqual([]);
    const missing = await app.inject({ method: "GET", url: "/v1/runs/0190a1b2-0000-7000-8000-000000000000" });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe("run_not_found");
    const route = await app.inject({ method: "GET", url: "/v1/nothing" });
    expect(route.json().error.code).toBe("not_found");
  });

  it("refuses a body over the limit with payload_too_large", async () => {
    const { app } = await harness.setup({ bodyLimit: 1024 });
    const response = await app.inject({
      method: "POST",
      url: "/v1/runs",
      payload: { assistant: "echo", input: "x".repeat(4096) },
    });
    expect(response.statusCode).toBe(413);
    expect(response.json().error.code).toBe("payload_too_large");
  });

  it("limits requests per tenant and says when to retry", async () => {
    const { app } = await harness.setup({ rateLimit: { max: 3, windowMs: 60_000 } });
    const codes: number[] = [];
    for (let i = 0; i < 5; i++) codes.push((await app.inject({ method: "GET", url: "/v1/runs" })).statusCode);
    expect(codes).toEqual([200, 200, 200, 429, 429]);
    const limited = await app.inject({ method: "GET", url: "/v1/runs" });
    expect(limited.json().error.code).toBe("rate_limited");
    expect(limited.headers["retry-after"]).toBeDefined();
  });

  it("sends security headers and a request id on every response, keeping a client's UUID", async () => {
    const { app } = await harness.setup();
    const id = "6f1c2d3e-4b5a-4c6d-8e7f-001122334455";
    const response = await app.inject({
      method: "GET",
      url: "/health/live",
      headers: { "x-request-id": id },
    });
    expect(response.headers["x-request-id"]).toBe(id);
    expect(response.headers["x-content-type-options"]).toBe("nosniff");
    expect(response.headers["access-control-allow-origin"]).toBeUndefined();
    const forged = await app.inject({
      method: "GET",
      url: "/health/live",
      headers: { "x-request-id": "<script>" },
    });
    expect(forged.headers["x-request-id"]).not.toBe("<script>");
  });
});
