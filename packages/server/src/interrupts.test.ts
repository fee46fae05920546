import { describe, expect, it } from "vitest";
import { serverHarness } from "./testing/harness.js";

const harness = serverHarness();

describe("interrupts over HTTP", () => {
  it("lists a parked run's interrupt in the inbox, decides it, and the run resumes where it asked", async () => {
    const { app, runtime } = await harness.setup();
    const run = (
      await app.inject({ method: "POST", url: "/v1/runs", payload: { assistant: "approval", input: "go" } })
    ).json();
    await runtime.wait(run.id, { onPark: "return" });
    const inbox = (await app.inject({ method: "GET", url: "/v1/interrupts" })).json();
    expect(inbox.items).toHaveLength(1);
    const interrupt = inbox.items[0];
    expect(interrupt).toMatchObject({
      runId: run.id,
      kind: "approval",
      status: "pending",
      request: { question: "Ship it?" },
    });
    const decided = await app.inject({
      method: "POST",
      url: `/v1/interrupts/${interrupt.id}/decision`,
      payload: { kind: "approve", reason: "looks fine" },
    });
    expect(decided.statusCode).toBe(200);
    expect(decided.json().interrupt.status).toBe("decided");
    const done = await runtime.wait(run.id);
    expect(done.status).toBe("succeeded");
    const session = (await app.inject({ method: "GET", url: `/v1/runs/${run.id}/session` })).json();
    expect(session.chunks.at(-1).content).toBe("decided: approve");
    const again = await app.inject({
      method: "POST",
      url: `/v1/interrupts/${interrupt.id}/decision`,
      payload: { kind: "reject" },
    });
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe("interrupt_decided");
    expect((await app.inject({ method: "GET", url: "/v1/interrupts" })).json().items).toEqual([]);
  });

  it("pages the inbox with a cursor: every pending interrupt exactly once", async () => {
    const { app, runtime } = await harness.setup();
    const runs: string[] = [];
    for (let i = 0; i < 5; i++) {
      const run = (
        await app.inject({
          method: "POST",
          url: "/v1/runs",
          payload: { assistant: "approval", input: `r${i}` },
        })
      ).json();
      runs.push(run.id);
    }
    for (const id of runs) await runtime.wait(id, { onPark: "return" });
    const seen: string[] = [];
    let next: string | null = null;
    do {
      const query: string = next ? `&cursor=${encodeURIComponent(next)}` : "";
      const page = (await app.inject({ method: "GET", url: `/v1/interrupts?limit=2${query}` })).json();
      seen.push(...page.items.map((item: { runId: string }) => item.runId));
      next = page.next;
    } while (next);
    expect(seen.sort()).toEqual([...runs].sort());
  });

  it("refuses a decision of an unknown kind with invalid_request, and one for no interrupt with interrupt_not_found", async () => {
    const { app } = await harness.setup();
    const bad = await app.inject({
      method: "POST",
      url: "/v1/interrupts/x/decision",
      payload: { kind: "maybe" },
    });
    expect(bad.json().error.code).toBe("invalid_request");
    const missing = await app.inject({
      method: "POST",
      url: "/v1/interrupts/nope/decision",
      payload: { kind: "approve" },
    });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe("interrupt_not_found");
  });
});
