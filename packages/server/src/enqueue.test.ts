import type { AccessStoreV1 } from "@openrath/runtime-durable/store";
import { describe, expect, it } from "vitest";
import { bearer, mint, serverHarness } from "./testing/harness.js";

const harness = serverHarness();

async function until<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  const end = Date.now() + 20_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("ifBusy: enqueue", () => {
  it("a message to a busy session is stored (202) and becomes the session's next run when the active run ends", async () => {
    const { app, runtime } = await harness.setup();
    const first = (
      await app.inject({
        method: "POST",
        url: "/v1/runs",
        payload: { assistant: "approval", input: "ship?" },
      })
    ).json();
    await runtime.wait(first.id, { onPark: "return" });
    const queued = await app.inject({
      method: "POST",
      url: "/v1/runs",
      payload: { assistant: "echo", sessionId: first.sessionId, input: "and then?", ifBusy: "enqueue" },
    });
    expect(queued.statusCode).toBe(202);
    const message = queued.json();
    expect(message).toMatchObject({
      sessionId: first.sessionId,
      assistant: "echo",
      status: "pending",
      runId: null,
    });
    // Still waiting on the interrupt: the message waits too.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const waiting = await app.inject({ method: "GET", url: `/v1/queued-messages/${message.id}` });
    expect(waiting.json(), waiting.body).toMatchObject({ status: "pending" });
    const [interrupt] = (await app.inject({ method: "GET", url: "/v1/interrupts" })).json().items;
    await app.inject({
      method: "POST",
      url: `/v1/interrupts/${interrupt.id}/decision`,
      payload: { kind: "approve" },
    });

    const submitted = await until(async () => {
      const read = (await app.inject({ method: "GET", url: `/v1/queued-messages/${message.id}` })).json();
      return read.status === "submitted" ? read : undefined;
    }, "the queued message's run");
    const next = await runtime.wait(submitted.runId);
    expect(next).toMatchObject({ status: "succeeded", sessionId: first.sessionId, workflow: "echo" });
    const session = (await app.inject({ method: "GET", url: `/v1/runs/${next.id}/session` })).json();
    // The session's history, then the queued message and its answer.
    expect(session.chunks.map((chunk: { content: string }) => chunk.content)).toEqual([
      "ship?",
      "decided: approve",
      "and then?",
      "echo: and then?",
    ]);
  });

  it("enqueue needs sessionId and input, and another tenant's queued message is not found", async () => {
    const { app, runtime } = await harness.setup({ auth: { mode: "tokens" } });
    const access = runtime.store.access as AccessStoreV1;
    const mine = await mint(access, { grants: ["*"] });
    const theirs = await mint(access, { tenantId: "other", grants: ["*"] });
    const first = (
      await app.inject({
        method: "POST",
        url: "/v1/runs",
        headers: bearer(mine),
        payload: { assistant: "approval", input: "ship?" },
      })
    ).json();
    await runtime.wait(first.id, { onPark: "return" });
    const message = (
      await app.inject({
        method: "POST",
        url: "/v1/runs",
        headers: bearer(mine),
        payload: { assistant: "echo", sessionId: first.sessionId, input: "next", ifBusy: "enqueue" },
      })
    ).json();
    const foreign = await app.inject({
      method: "GET",
      url: `/v1/queued-messages/${message.id}`,
      headers: bearer(theirs),
    });
    expect(foreign.statusCode).toBe(404);
    // The other tenant cannot queue behind this tenant's session: it has no such session.
    const probe = await app.inject({
      method: "POST",
      url: "/v1/runs",
      headers: bearer(theirs),
      payload: { assistant: "echo", sessionId: first.sessionId, input: "sneak", ifBusy: "enqueue" },
    });
    expect(probe.statusCode).toBe(404);
    const audit = (await access.listAudit({ tenantId: "default", limit: 500 })).items;
    expect(
      audit.some((entry) => entry.resourceKind === "queued_message" && entry.resourceId === message.id),
    ).toBe(true);
  });
});
