import { describe, expect, it } from "vitest";
import { createClient } from "./create-client.js";
import { OpenRathApiError } from "./openrath-api-error.js";
import { serverPerFile } from "./testing/server.js";

const server = serverPerFile();

describe("interrupts and effects through the client", () => {
  it("decides a parked run's interrupt, and the run resumes where it asked", async () => {
    const client = createClient({ baseUrl: server().baseUrl });
    const run = await client.runs.create({ assistant: "approval", input: "go" });
    expect((await client.runs.wait(run.id, { parked: true })).status).toBe("waiting");
    const inbox = await client.interrupts.list({ runId: run.id });
    expect(inbox.items).toHaveLength(1);
    const [pending] = inbox.items;
    expect(pending).toMatchObject({ runId: run.id, kind: "approval", status: "pending" });
    expect(await client.interrupts.get(pending?.id ?? "")).toEqual(pending);
    const decided = await client.interrupts.decide(pending?.id ?? "", { kind: "approve", reason: "fine" });
    expect(decided.interrupt.status).toBe("decided");
    expect(decided.run.id).toBe(run.id);
    expect((await client.runs.wait(run.id)).status).toBe("succeeded");
    const session = await client.runs.session(run.id);
    expect((session.chunks as { content?: string }[]).at(-1)?.content).toBe("decided: approve");
    const again = await client.interrupts
      .decide(pending?.id ?? "", { kind: "reject" })
      .catch((error: unknown) => error);
    expect(OpenRathApiError.isInstance(again, "interrupt_decided")).toBe(true);
    expect((again as OpenRathApiError).status).toBe(409);
  });

  it("lists no effect under review and says effect_not_found for an unknown one", async () => {
    const client = createClient({ baseUrl: server().baseUrl });
    expect(await client.effects.list()).toEqual({ items: [], next: null });
    const missing = await client.effects.get("nope").catch((error: unknown) => error);
    expect(OpenRathApiError.isInstance(missing, "effect_not_found")).toBe(true);
    const resolved = await client.effects
      .resolve("nope", { kind: "failed", reason: "gone" })
      .catch((error: unknown) => error);
    expect(OpenRathApiError.isInstance(resolved, "effect_not_found")).toBe(true);
  });
});
