import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { closeAllSandboxes, defaultRegistry, type LineageNode, Session } from "@openrath/core";
import { MamsWorkflow, scriptedBrain, TASK } from "@openrath/demo";
import { DurableMamsWorkflow } from "@openrath/demo/durable";
import { createDurableRuntime } from "@openrath/runtime-durable";
import { localSandbox } from "@openrath/sandbox-local";
import { pgliteStore } from "@openrath/store-postgres";
import { trace } from "@opentelemetry/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openrathTelemetry } from "../index.js";

let dir: string;
beforeAll(async () => {
  const registry = defaultRegistry();
  if (!registry.has("sandbox", "local")) registry.registerSandbox(localSandbox());
  dir = await mkdtemp(join(tmpdir(), "openrath-otel-nosdk-"));
});
afterAll(async () => {
  await closeAllSandboxes();
  await rm(dir, { recursive: true, force: true });
});

function nodesOf(session: Session): LineageNode[] {
  const out = new Map<string, LineageNode>();
  const stack = [session.lineage];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (out.has(node.id)) continue;
    out.set(node.id, node);
    stack.push(...node.parents);
  }
  return [...out.values()];
}

describe("with no OpenTelemetry SDK registered", () => {
  it("the API hands out non-recording spans (the precondition of these tests)", () => {
    expect(trace.getTracer("probe").startSpan("probe").isRecording()).toBe(false);
  });

  it("an in-process MAMS run with the telemetry's run options gives the same answer and records no trace links", async () => {
    const telemetry = openrathTelemetry();
    const plain = await new MamsWorkflow(scriptedBrain(), { workspace: join(dir, "plain") }).run(
      Session.fromUserMessage(TASK, { author: "user" }),
    );
    const traced = await new MamsWorkflow(scriptedBrain(), { workspace: join(dir, "traced") }).run(
      Session.fromUserMessage(TASK, { author: "user" }),
      telemetry.runOptions,
    );
    expect(traced.text()).toBe(plain.text());
    expect(nodesOf(traced).length).toBe(nodesOf(plain).length);
    for (const node of nodesOf(traced)) expect(node.trace).toBeUndefined();
  }, 60_000);

  it("a durable MAMS run stores no trace context of its own, passes the caller's through, and journals no trace ids", async () => {
    const db = await PGlite.create();
    const store = await pgliteStore({ db, schema: "otel_nosdk" });
    const telemetry = openrathTelemetry();
    const runtime = createDurableRuntime({ store, ...telemetry.runtime });
    await runtime.register(new DurableMamsWorkflow(scriptedBrain(), { workspace: join(dir, "durable") }));
    const worker = runtime.worker({ workerId: "only" });
    await worker.start();
    try {
      const untraced = await runtime.submit(
        "durable-mams",
        Session.fromUserMessage(TASK, { author: "user" }),
      );
      expect(untraced.traceContext).toBeUndefined();
      const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
      const continued = await runtime.submit(
        "durable-mams",
        Session.fromUserMessage(TASK, { author: "user" }),
        {
          traceContext: { traceparent },
        },
      );
      expect(continued.traceContext).toEqual({ traceparent });
      for (const run of [untraced, continued]) {
        expect((await runtime.wait(run.id)).status).toBe("succeeded");
        const session = await runtime.result(run.id);
        expect(session.text()).toContain("The sentence has 9 words.");
        for (const node of nodesOf(session)) expect(node.trace).toBeUndefined();
      }
      expect((await store.getRun(continued.id, "default"))?.traceContext).toEqual({ traceparent });
      const traced = await db.query("select 1 from otel_nosdk.journal where trace_id is not null");
      expect(traced.rows).toEqual([]);
    } finally {
      await worker.stop({ drain: false });
      await runtime.close();
      await db.close();
    }
  }, 60_000);
});
