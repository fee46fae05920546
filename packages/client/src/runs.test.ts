import { describe, expect, expectTypeOf, it } from "vitest";
import { createClient } from "./create-client.js";
import { serverPerFile } from "./testing/server.js";
import type { Run, SessionJson } from "./types.js";

const server = serverPerFile();

describe("runs through the client", () => {
  it("creates a run, follows its stream to the end, and reads it back typed", async () => {
    const client = createClient({ baseUrl: server().baseUrl });
    const run = await client.runs.create({ assistant: "echo", input: "hi" });
    expectTypeOf(run).toEqualTypeOf<Run>();
    expect(run).toMatchObject({ workflow: "echo", status: "queued", tenantId: "default" });
    const done = await client.runs.wait(run.id);
    expect(done.status).toBe("succeeded");
    expect(await client.runs.get(run.id)).toEqual(done);
    const session: SessionJson = await client.runs.session(run.id);
    expect((session.chunks as { content?: string }[]).at(-1)?.content).toBe("echo: hi");
    const listed = await client.runs.list({ status: ["succeeded"], sessionId: run.sessionId });
    expect(listed.items.map((item) => item.id)).toEqual([run.id]);
    expect(listed.next).toBeNull();
    expect((await client.runs.list({ status: "queued,running", sessionId: run.sessionId })).items).toEqual(
      [],
    );
  });

  it("reads a run's session and its lineage through client.sessions, and merges two runs", async () => {
    const client = createClient({ baseUrl: server().baseUrl });
    const root = await client.runs.wait((await client.runs.create({ assistant: "echo", input: "root" })).id);
    const fork = async (input: string) =>
      client.runs.wait((await client.runs.create({ assistant: "echo", from: { runId: root.id }, input })).id);
    const [left, right] = [await fork("left"), await fork("right")];
    const merged = await client.runs.wait(
      (await client.runs.create({ assistant: "echo", merge: [{ runId: left.id }, { runId: right.id }] })).id,
    );
    const { session, runs } = await client.sessions.get(merged.sessionId);
    expect(runs.map((run) => run.id)).toEqual([merged.id]);
    expect(session.chunks.map((chunk) => chunk.content)).toEqual([
      "root",
      "echo: root",
      "left",
      "echo: left",
      "right",
      "echo: right",
      "echo: echo: right",
    ]);
    const lineage = await client.sessions.lineage(merged.sessionId);
    expect(lineage.nodes.filter((node) => node.op === "fork")).toHaveLength(2);
    expect(lineage.nodes.at(-1)?.op).toBe("merge");
  });

  it("sends the idempotency key: the same key and body give the first run back", async () => {
    const client = createClient({ baseUrl: server().baseUrl });
    const first = await client.runs.create({ assistant: "echo", input: "once" }, { idempotencyKey: "k-1" });
    const again = await client.runs.create({ assistant: "echo", input: "once" }, { idempotencyKey: "k-1" });
    expect(again.id).toBe(first.id);
    expect(again.idempotencyKey).toBe("k-1");
    const other = await client.runs.create({ assistant: "echo", input: "once" });
    expect(other.id).not.toBe(first.id);
  });

  it("cancels a run parked on an interrupt", async () => {
    const client = createClient({ baseUrl: server().baseUrl });
    const run = await client.runs.create({ assistant: "approval", input: "go" });
    expect((await client.runs.wait(run.id, { parked: true })).status).toBe("waiting");
    const cancelled = await client.runs.cancel(run.id, { reason: "not today" });
    expect(["cancelled", "running", "queued"]).toContain(cancelled.status);
    expect((await client.runs.wait(run.id)).status).toBe("cancelled");
  });

  it("resumes only a run parked for review: a run waiting on an interrupt is a conflict", async () => {
    const client = createClient({ baseUrl: server().baseUrl });
    const run = await client.runs.create({ assistant: "approval", input: "go" });
    expect((await client.runs.wait(run.id, { parked: true })).status).toBe("waiting");
    const refused = await client.runs.resume(run.id).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toMatchObject({ status: 409, code: "invalid_transition", name: "OpenRathApiError" });
    expect((await client.runs.get(run.id)).status).toBe("waiting");
  });

  it("answers the health probes and lists, reads and deploys assistants", async () => {
    const client = createClient({ baseUrl: server().baseUrl });
    expect(await client.health.live()).toEqual({ status: "ok" });
    expect(await client.health.ready()).toEqual({ status: "ready", checks: { store: "ok" } });
    const { items } = await client.assistants.list();
    expect(items.map((assistant) => assistant.name)).toEqual(["approval", "chatty", "echo"]);
    const echo = await client.assistants.get("echo");
    const revision = echo.revisions[0];
    expect(echo.current?.hash).toBe(revision?.hash);
    const deployed = await client.assistants.deploy("echo", revision?.version ?? "");
    expect(deployed.current?.version).toBe(revision?.version);
  });
});
