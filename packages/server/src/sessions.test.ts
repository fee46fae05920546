import { lineageGraph, type Session } from "@openrath/core";
import { defineWorkflow } from "@openrath/runtime-durable";
import { describe, expect, it } from "vitest";
import { serverHarness } from "./testing/harness.js";

/**
 * A team in two steps, as the durable MAMS demo runs one: a specialist answers on a fork merged
 * back three-way, then a compressor replaces the transcript. Every step hands on a new identity.
 */
const team = defineWorkflow("team")
  .step(
    "specialist",
    async (session: Session) => {
      const branch = session
        .fork({ operator: "planner→analyst" })
        .append({ kind: "assistant", content: "found" });
      return session.merge(branch);
    },
    { entry: true, next: "compress" },
  )
  .step("compress", async (session: Session) =>
    session.derive({
      op: "compress",
      operator: "compressor",
      chunks: [{ kind: "user", content: "summary" }],
    }),
  );

const harness = serverHarness();

describe("sessions over HTTP", () => {
  it("reads a session's newest checkpoint with its runs, and its lineage graph", async () => {
    const { app, runtime } = await harness.setup();
    const run = (
      await app.inject({ method: "POST", url: "/v1/runs", payload: { assistant: "echo", input: "hi" } })
    ).json();
    await runtime.wait(run.id);
    const read = await app.inject({ method: "GET", url: `/v1/sessions/${run.sessionId}` });
    expect(read.statusCode).toBe(200);
    const body = read.json();
    expect(body.runs.map((r: { id: string }) => r.id)).toEqual([run.id]);
    expect(body.session.chunks.map((c: { content: string }) => c.content)).toEqual(["hi", "echo: hi"]);
    const lineage = (
      await app.inject({ method: "GET", url: `/v1/sessions/${run.sessionId}/lineage` })
    ).json();
    expect(lineage.nodes.map((node: { op: string }) => node.op)).toContain("leaf_user");
    const missing = await app.inject({ method: "GET", url: "/v1/sessions/no-such-session" });
    expect(missing.statusCode).toBe(404);
  });

  it("gives the lineage of a run's session as the whole DAG its run made: the fork, the merge and the compression", async () => {
    const { app, runtime } = await harness.setup({ workflows: [team] });
    const run = (
      await app.inject({ method: "POST", url: "/v1/runs", payload: { assistant: "team", input: "task" } })
    ).json();
    await runtime.wait(run.id);
    const stored = await runtime.session(run.id);
    const lineage = await app.inject({ method: "GET", url: `/v1/sessions/${run.sessionId}/lineage` });
    expect(lineage.statusCode).toBe(200);
    const nodes = lineage.json().nodes as { id: string; op: string; parents: string[] }[];
    expect(nodes.map((node) => node.op)).toEqual(["leaf_user", "fork", "merge", "compress"]);
    const [leaf, fork, merge, compress] = nodes;
    expect(leaf!.id).toBe(run.sessionId);
    expect(fork!.parents).toEqual([leaf!.id]);
    expect(merge!.parents).toEqual([leaf!.id, fork!.id]);
    expect(compress!.parents).toEqual([merge!.id]);
    // The same DAG the store holds behind the run's last checkpoint.
    expect(compress!.id).toBe(stored.id);
    expect(nodes.map((node) => node.id)).toEqual(lineageGraph(stored).nodes.map((node) => node.id));
    expect(lineage.json().edges).toHaveLength(4);
  });

  it("merges the sessions of two runs into a new run: the shared prefix once, then each branch, recorded as a merge", async () => {
    const { app, runtime } = await harness.setup();
    const root = (
      await app.inject({ method: "POST", url: "/v1/runs", payload: { assistant: "echo", input: "root" } })
    ).json();
    await runtime.wait(root.id);
    const branch = async (input: string) => {
      const created = await app.inject({
        method: "POST",
        url: "/v1/runs",
        payload: { assistant: "echo", from: { runId: root.id }, input },
      });
      await runtime.wait(created.json().id);
      return created.json();
    };
    const left = await branch("left");
    const right = await branch("right");
    const merged = await app.inject({
      method: "POST",
      url: "/v1/runs",
      payload: { assistant: "echo", merge: [{ runId: left.id }, { runId: right.id }], input: "together" },
    });
    expect(merged.statusCode).toBe(201);
    await runtime.wait(merged.json().id);
    const session = (await app.inject({ method: "GET", url: `/v1/runs/${merged.json().id}/session` })).json();
    const texts = session.chunks.map((c: { content: string }) => c.content);
    expect(texts).toEqual([
      "root",
      "echo: root",
      "left",
      "echo: left",
      "right",
      "echo: right",
      "together",
      "echo: together",
    ]);
    expect(session.lineage[0]).toMatchObject({ op: "merge" });
    const both = await app.inject({
      method: "POST",
      url: "/v1/runs",
      payload: {
        assistant: "echo",
        from: { runId: left.id },
        merge: [{ runId: left.id }, { runId: right.id }],
      },
    });
    expect(both.json().error.code).toBe("invalid_request");
  });

  it("continues a session with its next message; a busy session rejects it, or with ifBusy=interrupt cancels the active run first", async () => {
    const { app, runtime } = await harness.setup();
    const first = (
      await app.inject({ method: "POST", url: "/v1/runs", payload: { assistant: "echo", input: "one" } })
    ).json();
    await runtime.wait(first.id);
    const next = await app.inject({
      method: "POST",
      url: "/v1/runs",
      payload: { assistant: "approval", sessionId: first.sessionId, input: "two" },
    });
    expect(next.statusCode).toBe(201);
    expect(next.json().sessionId).toBe(first.sessionId);
    await runtime.wait(next.json().id, { onPark: "return" });
    const busy = await app.inject({
      method: "POST",
      url: "/v1/runs",
      payload: { assistant: "echo", sessionId: first.sessionId, input: "three" },
    });
    expect(busy.statusCode).toBe(409);
    expect(busy.json().error.code).toBe("session_busy");
    const interrupting = await app.inject({
      method: "POST",
      url: "/v1/runs",
      payload: { assistant: "echo", sessionId: first.sessionId, input: "three", ifBusy: "interrupt" },
    });
    expect(interrupting.statusCode).toBe(201);
    expect((await runtime.get(next.json().id))?.status).toBe("cancelled");
    await runtime.wait(interrupting.json().id);
    const session = (
      await app.inject({ method: "GET", url: `/v1/runs/${interrupting.json().id}/session` })
    ).json();
    expect(session.chunks.map((c: { content: string }) => c.content)).toEqual([
      "one",
      "echo: one",
      "two",
      "three",
      "echo: three",
    ]);
    const unknown = await app.inject({
      method: "POST",
      url: "/v1/runs",
      payload: { assistant: "echo", sessionId: "nope", input: "x" },
    });
    expect(unknown.statusCode).toBe(404);
  });
});
