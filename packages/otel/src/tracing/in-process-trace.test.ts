import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Agent,
  closeAllSandboxes,
  defaultRegistry,
  ReplayProvider,
  ScriptedProvider,
  Session,
} from "@openrath/core";
import { MamsWorkflow, scriptedBrain, TASK } from "@openrath/demo";
import { bm25Memory } from "@openrath/memory-bm25";
import { localSandbox } from "@openrath/sandbox-local";
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openrathTelemetry } from "../index.js";

let dir: string;
beforeAll(async () => {
  const registry = defaultRegistry();
  if (!registry.has("sandbox", "local")) registry.registerSandbox(localSandbox());
  dir = await mkdtemp(join(tmpdir(), "openrath-otel-inproc-"));
});
afterAll(async () => {
  await closeAllSandboxes();
  await rm(dir, { recursive: true, force: true });
});

function recorder() {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const spans = () => exporter.getFinishedSpans();
  const under = (root: ReadableSpan) =>
    spans()
      .filter((s) => s.parentSpanContext?.spanId === root.spanContext().spanId)
      .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
  return { tracer: provider.getTracer("test"), spans, under };
}

describe("tracing an in-process run", () => {
  it("nests the MAMS workflow's agents, forks, merges, compression and routing under the workflow span", async () => {
    const { tracer, spans, under } = recorder();
    const telemetry = openrathTelemetry({ tracer, captureContent: true });
    const out = await new MamsWorkflow(scriptedBrain(), { workspace: join(dir, "mams") }).run(
      Session.fromUserMessage(TASK, { author: "user" }),
      telemetry.runOptions,
    );
    const root = spans().find((s) => s.name === "workflow mams")!;
    expect(root.parentSpanContext).toBeUndefined();
    expect(root.attributes["openrath.lineage.node.id"]).toBe(out.lineage.id);
    const names = under(root).map((s) => s.name);
    expect(names.filter((n) => n === "session.fork")).toHaveLength(3);
    expect(names.filter((n) => n === "session.merge")).toHaveLength(2);
    expect(names).toEqual(
      expect.arrayContaining([
        "invoke_agent planner",
        "invoke_agent wordsmith",
        "invoke_agent analyst",
        "invoke_agent statistician",
        "select router",
        "invoke_agent writer",
      ]),
    );
    expect(names.indexOf("invoke_agent planner")).toBe(0);
    expect(names.at(-1)).toBe("invoke_agent writer");
    // The compressor's call is a model call of the workflow itself.
    const compress = under(root).find((s) => s.attributes["openrath.caller.kind"] === "Compressor")!;
    expect(compress.name).toMatch(/^chat /);
    // With captureContent, the messages and tool arguments are on the spans.
    const planner = under(root)[0]!;
    const [chat] = under(planner);
    expect(JSON.parse(chat!.attributes["gen_ai.input.messages"] as string)[0].role).toBe("system");
    expect(chat!.attributes["gen_ai.output.messages"]).toEqual(expect.any(String));
    const tools = spans().filter((s) => s.name === "execute_tool run_shell_command");
    expect(tools).toHaveLength(3);
    for (const tool of tools) {
      expect(tool.attributes["gen_ai.tool.call.arguments"]).toEqual(expect.stringContaining("node"));
      const [exec] = under(tool);
      expect(exec?.attributes).toMatchObject({ "process.executable.name": "node", "process.exit.code": 0 });
      expect(exec?.attributes["process.command_line"]).toEqual(expect.stringContaining("node"));
    }
    // Every span of the run is in the root's trace.
    expect(new Set(spans().map((s) => s.spanContext().traceId)).size).toBe(1);
  }, 60_000);

  it("records memory recall and commit, and a call a ReplayProvider answers is marked replayed without usage", async () => {
    const { tracer, spans, under } = recorder();
    const telemetry = openrathTelemetry({ tracer });
    const memory = await bm25Memory().open({ scope: { tenant: "t", user: "u" } });
    await memory.remember({ text: "Ada prefers answers in French.", scope: { tenant: "t", user: "u" } });
    const agent = new Agent({
      name: "helper",
      provider: new ScriptedProvider([{ text: "Bonjour." }]),
      memory,
      memoryScope: { tenant: "t", user: "u" },
    });
    await agent.run(Session.fromUserMessage("Which language does Ada prefer?"), telemetry.runOptions);
    const invoke = spans().find((s) => s.name === "invoke_agent helper")!;
    expect(under(invoke).map((s) => s.name)).toEqual([
      "memory.recall helper",
      "chat scripted",
      "memory.commit helper",
    ]);
    const [recall, chat, commit] = under(invoke);
    expect(recall!.attributes["openrath.memory.hits"]).toBeGreaterThan(0);
    expect(recall!.attributes["openrath.memory.query"]).toBeUndefined();
    expect(commit!.attributes["openrath.memory.entries"]).toBeGreaterThan(0);
    expect(chat!.attributes["gen_ai.usage.output_tokens"]).toEqual(expect.any(Number));
    expect(chat!.attributes["openrath.replayed"]).toBeUndefined();
    await memory.close();

    // A recording of a run without memory, replayed: the call is answered from the recording.
    const question = Session.fromUserMessage("Which language?");
    const recorded = await new Agent({
      name: "plain",
      provider: new ScriptedProvider([{ text: "French." }]),
    }).run(question);
    await new Agent({ name: "plain", provider: ReplayProvider.from(recorded) }).run(
      question,
      telemetry.runOptions,
    );
    const replayed = spans().filter((s) => s.attributes["openrath.replayed"] === "replay");
    expect(replayed).toHaveLength(1);
    expect(replayed[0]!.attributes["gen_ai.provider.name"]).toBe("replay");
    expect(replayed[0]!.attributes["gen_ai.usage.input_tokens"]).toBeUndefined();
  });
});
