import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { closeAllSandboxes, defaultRegistry, Session } from "@openrath/core";
import { scriptedBrain, TASK } from "@openrath/demo";
import { DurableMamsWorkflow } from "@openrath/demo/durable";
import { createDurableRuntime } from "@openrath/runtime-durable";
import { localSandbox } from "@openrath/sandbox-local";
import { pgliteStore } from "@openrath/store-postgres";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openrathTracing } from "./index.js";
import type { ReceivedSpan } from "./testing/otlp-receiver.js";
import { type ReceiverProcess, spawnOtlpReceiver } from "./testing/receiver-process.js";

let receiver: ReceiverProcess;
let dir: string;

beforeAll(async () => {
  const registry = defaultRegistry();
  if (!registry.has("sandbox", "local")) registry.registerSandbox(localSandbox());
  dir = await mkdtemp(join(tmpdir(), "openrath-otel-otlp-mams-"));
  receiver = await spawnOtlpReceiver();
});

afterAll(async () => {
  await receiver.close();
  await closeAllSandboxes();
  await rm(dir, { recursive: true, force: true });
});

const MODEL = scriptedBrain().model;
/** `Span.SpanKind` of the OTLP protobuf (the API's enum counts from INTERNAL = 0, OTLP from UNSPECIFIED). */
const OTLP_KIND = { INTERNAL: 1, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 } as const;

describe("a durable MAMS run exported over OTLP/HTTP", () => {
  it("arrives at the receiver as one trace of submit, run, step, GenAI and tool spans, decoded from protobuf", async () => {
    const provider = new TracerProvider({
      spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: receiver.url }) })],
    });
    const tracing = openrathTracing({ tracer: provider.getTracer("@openrath/otel") });
    const db = await PGlite.create();
    const store = await pgliteStore({ db, schema: "otel_otlp_mams" });
    const runtime = createDurableRuntime({
      store,
      middleware: [tracing.middleware],
      traceSubmit: tracing.traceSubmit,
    });
    await runtime.register(new DurableMamsWorkflow(scriptedBrain(), { workspace: join(dir, "mams") }));

    const caller = { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331" };
    const run = await runtime.submit("durable-mams", Session.fromUserMessage(TASK, { author: "user" }), {
      traceContext: { traceparent: `00-${caller.traceId}-${caller.spanId}-01` },
    });
    const worker = runtime.worker({ workerId: "worker-otlp", log: () => {} });
    await worker.start();
    expect((await runtime.wait(run.id)).status).toBe("succeeded");
    const session = await runtime.result(run.id);
    await worker.stop({ drain: false });
    // The batch goes out now; forceFlush settles once the receiver has answered the export.
    await provider.forceFlush();
    await provider.shutdown();

    const spans = await receiver.received();
    expect(spans.length).toBeGreaterThan(10);
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const named = (name: string) => spans.filter((s) => s.name === name);
    /** The spans whose parent is `parent`, in start order. */
    const under = (parent: ReceivedSpan) =>
      spans
        .filter((s) => s.parentSpanId === parent.spanId)
        .sort((a, b) => (BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : 1));

    // One trace, the caller's, every span from the OpenRath scope.
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([caller.traceId]));
    expect(new Set(spans.map((s) => s.scope))).toEqual(new Set(["@openrath/otel"]));
    expect(byId.size).toBe(spans.length);

    // submit → (run, steps), as the run's stored trace context says.
    const [submit] = named("submit durable-mams");
    expect(named("submit durable-mams")).toHaveLength(1);
    expect(submit!.parentSpanId).toBe(caller.spanId);
    expect(submit!.kind).toBe(OTLP_KIND.PRODUCER);
    expect(submit!.attributes["openrath.workflow"]).toBe("durable-mams");
    expect(run.traceContext?.traceparent).toBe(`00-${caller.traceId}-${submit!.spanId}-01`);
    const runSpans = named("run durable-mams");
    expect(runSpans).toHaveLength(1);
    expect(runSpans[0]!.parentSpanId).toBe(submit!.spanId);
    expect(runSpans[0]!.attributes).toMatchObject({
      "openrath.run.id": run.id,
      "openrath.run.status": "succeeded",
      "openrath.session.id": run.sessionId,
    });
    expect(runSpans[0]!.status.code).toBe(0);

    const steps = spans.filter((s) => s.name.startsWith("step "));
    for (const step of steps) {
      expect(step.parentSpanId, step.name).toBe(submit!.spanId);
      expect(step.kind, step.name).toBe(OTLP_KIND.CONSUMER);
      expect(step.attributes["openrath.worker.id"], step.name).toBe("worker-otlp");
    }
    expect(
      [...steps]
        .sort((a, b) => (BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : 1))
        .map((s) => s.attributes["openrath.step.id"]),
    ).toEqual(["plan", "wordsmith", "analyst", "statistician", "compress", "decide", "route", "writer"]);

    // Every span but the submission names the run, its session and a lineage node.
    for (const span of spans.filter((s) => s !== submit)) {
      expect(span.attributes["openrath.run.id"], span.name).toBe(run.id);
      expect(span.attributes["openrath.session.id"], span.name).toEqual(expect.any(String));
      expect(span.attributes["openrath.lineage.node.id"], span.name).toEqual(expect.any(String));
    }

    // Model calls: GenAI attributes as they came off the wire (token counts as integers).
    const chats = spans.filter((s) => s.name === `chat ${MODEL}`);
    expect(chats.length).toBeGreaterThanOrEqual(5);
    for (const chat of chats) {
      expect(chat.kind).toBe(OTLP_KIND.CLIENT);
      expect(chat.attributes).toMatchObject({
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "scripted",
        "gen_ai.request.model": MODEL,
        "gen_ai.usage.input_tokens": expect.any(Number),
        "gen_ai.usage.output_tokens": expect.any(Number),
      });
      expect(chat.attributes["gen_ai.usage.input_tokens"] as number).toBeGreaterThan(0);
      // Content stays off the spans unless asked for.
      expect(chat.attributes["gen_ai.input.messages"]).toBeUndefined();
    }

    // The wordsmith's agent loop: fork, invoke_agent, merge; the loop's chats and tool calls under it.
    const wordsmith = steps.find((s) => s.attributes["openrath.step.id"] === "wordsmith")!;
    const [fork, agent, merge] = under(wordsmith);
    expect([fork?.name, agent?.name, merge?.name]).toEqual([
      "session.fork",
      "invoke_agent wordsmith",
      "session.merge",
    ]);
    expect(agent!.attributes["gen_ai.operation.name"]).toBe("invoke_agent");
    expect(under(agent!).map((s) => s.name)).toEqual([
      `chat ${MODEL}`,
      "execute_tool write_workspace_file",
      `chat ${MODEL}`,
      "execute_tool run_shell_command",
      `chat ${MODEL}`,
    ]);
    const tools = spans.filter((s) => s.name.startsWith("execute_tool "));
    expect(tools.length).toBeGreaterThanOrEqual(2);
    for (const tool of tools) {
      expect(tool.attributes).toMatchObject({
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool.name.slice("execute_tool ".length),
      });
      expect(byId.get(tool.parentSpanId)?.name, tool.name).toMatch(/^invoke_agent /);
    }
    const shell = tools.find((s) => s.name === "execute_tool run_shell_command")!;
    expect(under(shell).map((s) => [s.name, s.attributes["process.exit.code"]])).toEqual([
      ["sandbox.exec", 0],
    ]);

    // The lineage the run left points into the exported trace: each loop node names its agent span.
    const loops = loopNodes(session);
    expect(loops.length).toBeGreaterThan(0);
    for (const node of loops) {
      expect(node.trace?.traceId).toBe(caller.traceId);
      expect(byId.get(node.trace!.spanId)?.name).toBe(`invoke_agent ${node.operator}`);
    }
    const writer = steps.find((s) => s.attributes["openrath.step.id"] === "writer")!;
    expect(writer.attributes["openrath.lineage.node.id"]).toBe(session.lineage.id);

    await runtime.close();
    await db.close();
  }, 120_000);
});

/** The `loop` nodes of a session's lineage. */
function loopNodes(session: Session) {
  const out: Session["lineage"][] = [];
  const seen = new Set<string>();
  const stack = [session.lineage];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (seen.has(node.id)) continue;
    seen.add(node.id);
    if (node.op === "loop") out.push(node);
    stack.push(...node.parents);
  }
  return out;
}
