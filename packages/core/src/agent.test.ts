import {
  Agent,
  AgentRunError,
  type AssistantChunk,
  createRegistry,
  defineTool,
  type EventChunk,
  OpenRathError,
  ProviderError,
  type RunEvent,
  SANDBOX_TOOLS,
  type SandboxBackendV1,
  type SandboxV1,
  ScriptedProvider,
  Session,
  type ToolContext,
  type ToolResultChunk,
  usageReport,
} from "@openrath/core";
import { requestFingerprint } from "@openrath/core/backend";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";

declare module "@openrath/core" {
  interface SandboxBackends {
    "agent-test": { readonly label?: string };
  }
}

const BUILTIN_NAMES = [
  "list_workspace_files",
  "read_workspace_file",
  "run_code",
  "run_shell_command",
  "workspace_path_exists",
  "write_workspace_file",
];

const usage = (totalTokens: number) => ({
  promptTokens: totalTokens - 1,
  completionTokens: 1,
  totalTokens,
});

/** The agent-loop event types (other run events, such as workflow markers, are left out of sequences). */
const AGENT_EVENTS = new Set<string>([
  "turn_start",
  "text_delta",
  "tool_call_delta",
  "assistant",
  "tool_start",
  "tool_progress",
  "tool_end",
]);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const toolResults = (session: Session) =>
  session.chunks.filter((c): c is ToolResultChunk => c.kind === "tool_result");

const bodies = (session: Session) => toolResults(session).map((c) => JSON.parse(c.content));

async function runError(promise: Promise<unknown>): Promise<AgentRunError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AgentRunError) return error;
    throw error;
  }
  throw new Error("expected an AgentRunError");
}

/** A sandbox that does nothing: these tests only check that tools reach the session's sandbox. */
function stubSandbox(id: string): SandboxV1 {
  const unsupported = async () => {
    throw new Error("not used in these tests");
  };
  return {
    id,
    workspace: "/workspace",
    exec: unsupported,
    readFile: unsupported as SandboxV1["readFile"],
    writeFile: unsupported,
    listFiles: unsupported,
    exists: async () => false,
    runCode: unsupported,
    close: async () => {},
  };
}

const opened: SandboxV1[] = [];
const backend: SandboxBackendV1 = {
  kind: "sandbox",
  key: "agent-test",
  specVersion: "v1",
  capabilities: {
    streaming: false,
    stdin: false,
    network: "none",
    isolation: "process",
    snapshots: false,
    languages: [],
  },
  async open() {
    const sandbox = stubSandbox(`stub-${opened.length + 1}`);
    opened.push(sandbox);
    return sandbox;
  },
};
const registry = createRegistry({ sandboxes: [backend] });
const placed: Session[] = [];
const place = (session: Session) => {
  const out = session.to("agent-test", {}, { registry });
  placed.push(out);
  return out;
};

afterEach(async () => {
  await Promise.all(placed.splice(0).map((s) => s.release()));
});

const echo = defineTool<{ text?: string }>({
  name: "echo",
  description: "Echo the text",
  parameters: { type: "object", properties: { text: { type: "string" } }, additionalProperties: false },
  execute: ({ text }) => ({ echoed: text ?? null }),
});

describe("Agent construction", () => {
  const provider = new ScriptedProvider([]);

  it.each([
    [{ name: "", provider }, "non-empty name"],
    [{ name: "a", provider: {} }, 'Agent "a" needs a provider'],
    [{ name: "a", provider, maxTurns: 0 }, "maxTurns must be a whole number >= 1, got 0"],
    [{ name: "a", provider, maxTurns: 2.5 }, "maxTurns must be a whole number >= 1, got 2.5"],
  ])("refuses %j", (options, message) => {
    let error: unknown;
    try {
      new Agent(options as unknown as ConstructorParameters<typeof Agent>[0]);
    } catch (e) {
      error = e;
    }
    expect(OpenRathError.isInstance(error, "invalid_argument")).toBe(true);
    expect((error as Error).message).toContain(message);
  });

  it("has defaults for turns, tools and description", () => {
    const agent = new Agent({ name: "a", provider });
    expect([agent.maxTurns, agent.tools, agent.description, agent.instructions]).toEqual([
      32,
      [],
      "",
      undefined,
    ]);
  });

  it("refuses a tool listed twice", () => {
    let error: unknown;
    try {
      new Agent({ name: "a", provider, tools: [echo, echo] });
    } catch (e) {
      error = e;
    }
    expect(OpenRathError.isInstance(error, "tool_name_conflict")).toBe(true);
    expect((error as Error).message).toBe(
      'Agent "a": tool "echo" is listed twice; tool names must be unique.',
    );
    expect((error as OpenRathError).details).toEqual({ tool: "echo" });
  });

  it.each(BUILTIN_NAMES)("refuses a user tool shadowing the built-in %s", (name) => {
    const shadow = defineTool({ name, description: "", parameters: {}, execute: () => 1 });
    expect(() => new Agent({ name: "a", provider, tools: [shadow] })).toThrow(
      `tool "${name}" shadows a built-in sandbox tool`,
    );
  });
});

describe("Agent.run: the loop", () => {
  it("sends the instructions first on every request and never copies them into the output", async () => {
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: "echo", arguments: { text: "x" } }] },
      { text: "done" },
    ]);
    const agent = new Agent({ name: "helper", instructions: "Be brief.", provider, tools: [echo] });
    const input = Session.fromUserMessage("hi");
    const out = await agent.run(input);
    expect(provider.requests).toHaveLength(2);
    for (const request of provider.requests) {
      expect(request.messages[0]).toEqual({ role: "system", content: "Be brief." });
      expect(request.messages.filter((m) => m.role === "system")).toHaveLength(1);
    }
    expect(out.chunks.some((c) => c.kind === "system")).toBe(false);
    expect(out.chunks.map((c) => c.kind)).toEqual(["user", "assistant", "tool_result", "assistant"]);
  });

  it("sends no system message without instructions", async () => {
    const provider = new ScriptedProvider([{ text: "ok" }]);
    await new Agent({ name: "a", provider }).run(Session.fromUserMessage("hi"));
    expect(provider.requests[0]!.messages).toEqual([{ role: "user", content: "hi" }]);
  });

  it("returns a new session (lineage op loop, operator = agent name, parent = input) and leaves the input alone", async () => {
    const provider = new ScriptedProvider([{ text: "hello" }]);
    const input = Session.fromUserMessage("hi");
    const out = await new Agent({ name: "greeter", provider }).run(input);
    expect(out.id).not.toBe(input.id);
    expect(out.lineage.op).toBe("loop");
    expect(out.lineage.operator).toBe("greeter");
    expect(out.lineage.parents.map((p) => p.id)).toEqual([input.id]);
    // The loop node records its branch and request digest for replays, nothing else.
    expect(Object.keys(out.lineage.extras).sort()).toEqual(["replay.branch", "replay.request"]);
    expect(input.length).toBe(1);
    expect(out.text()).toBe("hello");
    expect(out.at(-1)!.sessionId).toBe(out.id);
  });

  it("feeds the transcript so far to each request", async () => {
    const provider = new ScriptedProvider([
      { text: "Looking.", toolCalls: [{ name: "echo", arguments: { text: "a" } }] },
      { text: "done" },
    ]);
    await new Agent({ name: "a", provider, tools: [echo] }).run(Session.fromUserMessage("hi"));
    expect(provider.requests[1]!.messages).toEqual([
      { role: "user", content: "hi" },
      {
        role: "assistant",
        content: "Looking.",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "echo", arguments: '{"text":"a"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: '{"echoed":"a"}' },
    ]);
  });

  it("stops at the first turn without tool calls, whatever the finish reason", async () => {
    const provider = new ScriptedProvider([{ text: "cut short", finishReason: "length" }, { text: "never" }]);
    const out = await new Agent({ name: "a", provider }).run(Session.fromUserMessage("hi"));
    expect(provider.callCount).toBe(1);
    expect(out.text()).toBe("cut short");
  });

  it("sends the agent's request options and the tool specs (sorted by name) with every call", async () => {
    const zed = defineTool({
      name: "zed",
      description: "z",
      parameters: { type: "object" },
      execute: () => 1,
    });
    const provider = new ScriptedProvider([{ toolCalls: [{ name: "zed" }] }, { text: "ok" }]);
    const agent = new Agent({
      name: "a",
      provider,
      tools: [zed, echo],
      request: { temperature: 0.2, toolChoice: "auto", model: "big" },
    });
    await agent.run(Session.fromUserMessage("hi"));
    for (const request of provider.requests) {
      expect(request).toMatchObject({ temperature: 0.2, toolChoice: "auto", model: "big" });
      expect(request.tools?.map((t) => t.function.name)).toEqual(["echo", "zed"]);
    }
  });

  it("sends no tools field when the agent has none and the session is unplaced", async () => {
    const provider = new ScriptedProvider([{ text: "ok" }]);
    await new Agent({ name: "a", provider }).run(Session.fromUserMessage("hi"));
    expect(provider.requests[0]).not.toHaveProperty("tools");
  });

  it("records usage, model, finish reason, author and the request fingerprint on each assistant chunk", async () => {
    const provider = new ScriptedProvider(
      [
        { toolCalls: [{ name: "echo", arguments: {} }], usage: usage(30) },
        { text: "done", usage: usage(12), model: "other-model" },
      ],
      "main-model",
    );
    const out = await new Agent({ name: "coder", provider, tools: [echo] }).run(
      Session.fromUserMessage("hi"),
      {
        path: "flow",
      },
    );
    const assistants = out.chunks.filter((c): c is AssistantChunk => c.kind === "assistant");
    expect(assistants).toHaveLength(2);
    expect(assistants[0]).toMatchObject({
      author: "flow/coder",
      usage: usage(30),
      model: "main-model",
      finishReason: "tool_calls",
      requestHash: requestFingerprint(provider.requests[0]!),
    });
    expect(assistants[1]).toMatchObject({
      author: "flow/coder",
      usage: usage(12),
      model: "other-model",
      finishReason: "stop",
      requestHash: requestFingerprint(provider.requests[1]!),
    });
    expect(toolResults(out)[0]!.author).toBe("flow/coder");
  });

  it("uses the bare agent name as author without a path", async () => {
    const out = await new Agent({ name: "solo", provider: new ScriptedProvider([{ text: "x" }]) }).run(
      Session.fromUserMessage("hi"),
    );
    expect(out.at(-1)!.author).toBe("solo");
  });

  it("adds the new calls' usage to the input's", async () => {
    const input = Session.fromUserMessage("hi").append({
      kind: "assistant",
      content: "earlier",
      usage: usage(7),
      model: "old",
      author: "before",
    });
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: "echo" }], usage: usage(10) },
      { text: "done", usage: usage(20) },
    ]);
    const out = await new Agent({ name: "a", provider, tools: [echo] }).run(input);
    expect(out.usage.totalTokens).toBe(37);
    const byAuthor = usageReport(out.chunks).byAuthor.map((r) => [r.key, r.usage.totalTokens, r.calls]);
    expect(byAuthor).toEqual([
      ["a", 30, 2],
      ["before", 7, 1],
    ]);
  });
});

describe("Agent.run: maxTurns", () => {
  it("makes exactly maxTurns model calls and records the truncation", async () => {
    const provider = new ScriptedProvider(() => ({
      toolCalls: [{ name: "echo", arguments: { text: "again" } }],
    }));
    const agent = new Agent({ name: "looper", provider, tools: [echo], maxTurns: 3 });
    const out = await agent.run(Session.fromUserMessage("hi"));
    expect(provider.callCount).toBe(3);
    expect(toolResults(out)).toHaveLength(3);
    expect(out.lineage.extras).toMatchObject({ "loop.truncated": true, "loop.max_turns": 3 });
    expect(out.lineage.op).toBe("loop");
    expect(out.at(-1)).toMatchObject({
      kind: "event",
      name: "loop.max_turns",
      author: "looper",
      data: { agent: "looper", maxTurns: 3 },
    });
  });

  it("does not mark a run that finished on its last allowed turn", async () => {
    const provider = new ScriptedProvider([{ toolCalls: [{ name: "echo" }] }, { text: "done" }]);
    const out = await new Agent({ name: "a", provider, tools: [echo], maxTurns: 2 }).run(
      Session.fromUserMessage("hi"),
    );
    expect(out.lineage.extras["loop.truncated"]).toBeUndefined();
    expect(out.chunks.some((c) => c.kind === "event")).toBe(false);
  });
});

describe("Agent.run: tool failures become structured results", () => {
  const run = async (
    tools: Parameters<typeof toolsAgent>[0],
    calls: { name: string; arguments?: unknown }[],
  ) => {
    const provider = new ScriptedProvider([
      { toolCalls: calls as { name: string; arguments?: string }[] },
      { text: "recovered" },
    ]);
    const out = await toolsAgent(tools, provider).run(Session.fromUserMessage("hi"));
    expect(out.text()).toBe("recovered");
    return out;
  };
  const toolsAgent = (tools: ReturnType<typeof defineTool>[], provider: ScriptedProvider) =>
    new Agent({ name: "a", provider, tools: tools as never });

  it("answers invalid JSON arguments with invalid_tool_arguments and the raw text as detail", async () => {
    const out = await run([echo], [{ name: "echo", arguments: '{"text": "unterminated' }]);
    const [body] = bodies(out);
    expect(body).toMatchObject({
      ok: false,
      error_kind: "invalid_tool_arguments",
      detail: '{"text": "unterminated',
    });
    expect(body.message).toMatch(/^Tool arguments are not valid JSON/);
    expect(toolResults(out)[0]!.isError).toBe(true);
  });

  it("cuts the raw arguments in the detail at 2000 characters", async () => {
    const out = await run([echo], [{ name: "echo", arguments: `[${"1,".repeat(3000)}` }]);
    expect(bodies(out)[0].detail).toHaveLength(2000);
  });

  it("answers non-object arguments with invalid_tool_arguments", async () => {
    const out = await run([echo], [{ name: "echo", arguments: "[1,2]" }]);
    expect(bodies(out)[0]).toMatchObject({
      error_kind: "invalid_tool_arguments",
      message: "Tool arguments must be a JSON object, got an array.",
    });
  });

  it("answers arguments failing the schema with invalid_tool_arguments naming the field", async () => {
    let ran = false;
    const strict = defineTool({
      name: "strict",
      description: "",
      parameters: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
      execute: () => {
        ran = true;
      },
    });
    const out = await run([strict], [{ name: "strict", arguments: { n: "seven" } }]);
    expect(ran).toBe(false);
    expect(bodies(out)[0]).toEqual({
      ok: false,
      error_kind: "invalid_tool_arguments",
      message: 'Arguments for "strict" do not match its schema: $.n: expected integer, got string',
      detail: '{"n":"seven"}',
    });
  });

  it("validates a Standard Schema (zod) tool: execute gets the parsed output, problems name the field", async () => {
    const seen: unknown[] = [];
    const greet = defineTool({
      name: "greet",
      description: "",
      parameters: z.object({ name: z.string().min(1), times: z.number().int().default(1) }),
      execute: (args) => {
        seen.push(args);
        return `hi ${args.name} x${args.times}`;
      },
    });
    const out = await run(
      [greet],
      [
        { name: "greet", arguments: { name: "Ada" } },
        { name: "greet", arguments: { name: "", times: 1.5 } },
      ],
    );
    expect(seen).toEqual([{ name: "Ada", times: 1 }]);
    expect(bodies(out)[0]).toBe("hi Ada x1");
    expect(bodies(out)[1]).toMatchObject({ ok: false, error_kind: "invalid_tool_arguments" });
    expect(bodies(out)[1].message).toMatch(
      /^Arguments for "greet" do not match its schema: \$\.name: .*; \$\.times: /,
    );
  });

  it("answers an unknown tool with unknown_tool listing the available tools", async () => {
    const other = defineTool({ name: "alpha", description: "", parameters: {}, execute: () => 1 });
    const out = await run([echo, other], [{ name: "ghost", arguments: {} }]);
    expect(bodies(out)[0]).toEqual({
      ok: false,
      error_kind: "unknown_tool",
      message: 'There is no tool named "ghost". Available tools: alpha, echo.',
    });
    expect(toolResults(out)[0]!.name).toBe("ghost");
  });

  it("says (none) when the agent has no tools at all", async () => {
    const out = await run([], [{ name: "ghost" }]);
    expect(bodies(out)[0].message).toBe('There is no tool named "ghost". Available tools: (none).');
  });

  it("answers a thrown error with tool_execution_exception", async () => {
    const boom = defineTool({
      name: "boom",
      description: "",
      parameters: {},
      execute: () => {
        throw new TypeError("cannot read x");
      },
    });
    const out = await run([boom], [{ name: "boom" }]);
    expect(bodies(out)[0]).toEqual({
      ok: false,
      error_kind: "tool_execution_exception",
      message: "TypeError: cannot read x",
      detail: "TypeError",
    });
  });

  it("answers a thrown non-Error value with tool_execution_exception", async () => {
    const boom = defineTool({
      name: "boom",
      description: "",
      parameters: {},
      execute: async () => {
        throw "just a string";
      },
    });
    const out = await run([boom], [{ name: "boom" }]);
    expect(bodies(out)[0]).toMatchObject({
      error_kind: "tool_execution_exception",
      message: "Error: just a string",
    });
  });

  it("keeps the code of a thrown OpenRathError as the error kind", async () => {
    const quota = defineTool({
      name: "quota",
      description: "",
      parameters: {},
      execute: () => {
        throw new OpenRathError("quota_exhausted", "no more requests today");
      },
    });
    const out = await run([quota], [{ name: "quota" }]);
    expect(bodies(out)[0]).toEqual({
      ok: false,
      error_kind: "quota_exhausted",
      message: "no more requests today",
    });
  });

  it("answers a resourceKey that throws with tool_execution_exception, without running the tool", async () => {
    let ran = false;
    const keyed = defineTool({
      name: "keyed",
      description: "",
      parameters: {},
      resourceKey: () => {
        throw new RangeError("no lane");
      },
      execute: () => {
        ran = true;
      },
    });
    const out = await run([keyed], [{ name: "keyed" }]);
    expect(ran).toBe(false);
    expect(bodies(out)[0]).toMatchObject({
      error_kind: "tool_execution_exception",
      message: "RangeError: no lane",
    });
  });

  it("runs a tool without parameters called with empty arguments ('' or '{}')", async () => {
    let runs = 0;
    const ping = defineTool({
      name: "ping",
      description: "",
      parameters: { type: "object", properties: {}, additionalProperties: false },
      execute: (args) => {
        runs++;
        return { args };
      },
    });
    const out = await run(
      [ping],
      [
        { name: "ping", arguments: "" },
        { name: "ping", arguments: "{}" },
        { name: "ping", arguments: "  " },
      ],
    );
    expect(runs).toBe(3);
    expect(bodies(out)).toEqual([{ args: {} }, { args: {} }, { args: {} }]);
    expect(toolResults(out).every((c) => c.isError === undefined)).toBe(true);
  });

  it("projects the result with the tool's maxResultChars", async () => {
    const big = defineTool({
      name: "big",
      description: "",
      parameters: {},
      maxResultChars: 300,
      execute: () => "x".repeat(1000),
    });
    const out = await run([big], [{ name: "big" }]);
    expect(bodies(out)[0]).toMatchObject({ ok: true, truncated: true, total_chars: 1002 });
  });

  it("writes {ok:true} for a tool that returns nothing", async () => {
    const quiet = defineTool({ name: "quiet", description: "", parameters: {}, execute: () => undefined });
    const out = await run([quiet], [{ name: "quiet" }]);
    expect(toolResults(out)[0]!.content).toBe('{"ok":true}');
  });
});

describe("Agent.run: lanes", () => {
  /** A tool that records how many calls run at once, overall and per resource key. */
  function lanes() {
    let active = 0;
    const activeByKey = new Map<string, number>();
    const stats = {
      peak: 0,
      peakByKey: new Map<string, number>(),
      starts: [] as string[],
      ends: [] as string[],
    };
    const tool = defineTool<{ id: string; key: string; ms: number; fail?: boolean }>({
      name: "work",
      description: "",
      parameters: {
        type: "object",
        properties: {
          id: { type: "string" },
          key: { type: "string" },
          ms: { type: "number" },
          fail: { type: "boolean" },
        },
        required: ["id", "key", "ms"],
      },
      resourceKey: (args) => args.key,
      async execute({ id, key, ms, fail }) {
        active++;
        activeByKey.set(key, (activeByKey.get(key) ?? 0) + 1);
        stats.peak = Math.max(stats.peak, active);
        stats.peakByKey.set(key, Math.max(stats.peakByKey.get(key) ?? 0, activeByKey.get(key)!));
        stats.starts.push(id);
        try {
          await sleep(ms);
          if (fail) throw new Error(`${id} failed`);
          return { id };
        } finally {
          active--;
          activeByKey.set(key, activeByKey.get(key)! - 1);
          stats.ends.push(id);
        }
      },
    });
    return { tool, stats };
  }

  const runCalls = async (tool: ReturnType<typeof lanes>["tool"], calls: object[]) => {
    const provider = new ScriptedProvider([
      { toolCalls: calls.map((args) => ({ name: "work", arguments: args as never })) },
      { text: "done" },
    ]);
    return new Agent({ name: "a", provider, tools: [tool] }).run(Session.fromUserMessage("go"));
  };

  it("runs calls with the same resource key one at a time, in call order", async () => {
    const { tool, stats } = lanes();
    const out = await runCalls(tool, [
      { id: "1", key: "db", ms: 20 },
      { id: "2", key: "db", ms: 5 },
      { id: "3", key: "db", ms: 1 },
    ]);
    expect(stats.peak).toBe(1);
    expect(stats.starts).toEqual(["1", "2", "3"]);
    expect(stats.ends).toEqual(["1", "2", "3"]);
    expect(bodies(out)).toEqual([{ id: "1" }, { id: "2" }, { id: "3" }]);
  });

  it("runs calls with different keys at the same time", async () => {
    const { tool, stats } = lanes();
    await runCalls(tool, [
      { id: "1", key: "a", ms: 30 },
      { id: "2", key: "b", ms: 30 },
      { id: "3", key: "c", ms: 30 },
    ]);
    expect(stats.peak).toBe(3);
  });

  it("appends results in call order even when later calls finish first", async () => {
    const { tool, stats } = lanes();
    const out = await runCalls(tool, [
      { id: "slow", key: "a", ms: 40 },
      { id: "fast", key: "b", ms: 1 },
      { id: "second-in-a", key: "a", ms: 1 },
    ]);
    expect(stats.ends).toEqual(["fast", "slow", "second-in-a"]);
    expect(stats.peakByKey.get("a")).toBe(1);
    expect(stats.peak).toBe(2);
    expect(toolResults(out).map((c) => c.toolCallId)).toEqual(["call_1", "call_2", "call_3"]);
    expect(bodies(out)).toEqual([{ id: "slow" }, { id: "fast" }, { id: "second-in-a" }]);
  });

  it("keeps running siblings, in its lane too, when one call fails", async () => {
    const { tool, stats } = lanes();
    const out = await runCalls(tool, [
      { id: "1", key: "a", ms: 5, fail: true },
      { id: "2", key: "a", ms: 1 },
      { id: "3", key: "b", ms: 1 },
    ]);
    expect(stats.ends.sort()).toEqual(["1", "2", "3"]);
    expect(bodies(out)).toEqual([
      { ok: false, error_kind: "tool_execution_exception", message: "Error: 1 failed", detail: "Error" },
      { id: "2" },
      { id: "3" },
    ]);
  });

  it("serializes tools without a resource key in one global lane, and runs parallel tools at once", async () => {
    let active = 0;
    let peak = 0;
    const make = (name: string, parallel: boolean) =>
      defineTool({
        name,
        description: "",
        parameters: {},
        parallel,
        async execute() {
          peak = Math.max(peak, ++active);
          await sleep(10);
          active--;
        },
      });
    const serial = [make("s1", false), make("s2", false)];
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: "s1" }, { name: "s2" }, { name: "s1" }] },
      { text: "ok" },
    ]);
    await new Agent({ name: "a", provider, tools: serial }).run(Session.fromUserMessage("go"));
    expect(peak).toBe(1);

    peak = 0;
    const parallel = [make("p", true)];
    const provider2 = new ScriptedProvider([
      { toolCalls: [{ name: "p" }, { name: "p" }, { name: "p" }] },
      { text: "ok" },
    ]);
    await new Agent({ name: "a", provider: provider2, tools: parallel }).run(Session.fromUserMessage("go"));
    expect(peak).toBe(3);
  });
});

describe("Agent.run: the tool context", () => {
  it("gives the session as of the turn, the agent, the call id, the run's signal and emit", async () => {
    const seen: ToolContext[] = [];
    const probe = defineTool({
      name: "probe",
      description: "",
      parameters: {},
      execute: (_args, ctx) => {
        seen.push(ctx);
        ctx.emit({ progress: 0.5 });
        ctx.emit("half way");
        return "ok";
      },
    });
    const provider = new ScriptedProvider([{ toolCalls: [{ name: "probe", id: "c-42" }] }, { text: "done" }]);
    const controller = new AbortController();
    const events: RunEvent[] = [];
    const input = Session.fromUserMessage("hi");
    const out = await new Agent({ name: "helper", provider, tools: [probe] }).run(input, {
      signal: controller.signal,
      onEvent: (e) => events.push(e),
    });
    expect(seen).toHaveLength(1);
    const ctx = seen[0]!;
    expect(ctx.agent).toBe("helper");
    expect(ctx.callId).toBe("c-42");
    expect(ctx.signal).toBe(controller.signal);
    expect(ctx.session.id).toBe(out.id);
    expect(ctx.session.length).toBe(2);
    expect(ctx.session.at(-1)).toMatchObject({ kind: "assistant", toolCalls: [{ id: "c-42" }] });
    expect(events.filter((e) => e.type === "tool_progress")).toEqual([
      { type: "tool_progress", agent: "helper", callId: "c-42", name: "probe", data: { progress: 0.5 } },
      { type: "tool_progress", agent: "helper", callId: "c-42", name: "probe", data: "half way" },
    ]);
  });

  it("opens the placed session's sandbox on demand, shared by the calls of a run", async () => {
    const sandboxes: SandboxV1[] = [];
    const useSandbox = defineTool({
      name: "use_sandbox",
      description: "",
      parameters: {},
      parallel: true,
      execute: async (_args, ctx) => {
        const sandbox = await ctx.sandbox();
        sandboxes.push(sandbox);
        return { id: sandbox.id };
      },
    });
    const before = opened.length;
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: "use_sandbox" }, { name: "use_sandbox" }] },
      { text: "done" },
    ]);
    const input = place(Session.fromUserMessage("hi"));
    const out = await new Agent({ name: "a", provider, tools: [useSandbox] }).run(input);
    placed.push(out);
    expect(opened.length - before).toBe(1);
    expect(sandboxes[0]).toBe(sandboxes[1]);
    expect(await input.sandbox()).toBe(sandboxes[0]);
  });

  it("rejects ctx.sandbox() with not_placed on an unplaced session, which the model sees as the error kind", async () => {
    const useSandbox = defineTool({
      name: "use_sandbox",
      description: "",
      parameters: {},
      execute: async (_args, ctx) => (await ctx.sandbox()).id,
    });
    const provider = new ScriptedProvider([{ toolCalls: [{ name: "use_sandbox" }] }, { text: "done" }]);
    const out = await new Agent({ name: "a", provider, tools: [useSandbox] }).run(
      Session.fromUserMessage("hi"),
    );
    expect(bodies(out)[0]).toMatchObject({ ok: false, error_kind: "not_placed" });
    expect(JSON.parse((bodies(out)[0] as { detail: string }).detail)).toHaveProperty("sessionId");
  });
});

describe("Agent.run: built-in sandbox tools", () => {
  it("offers them only to a session placed on a sandbox", async () => {
    const provider = new ScriptedProvider([{ text: "unplaced" }, { text: "placed" }]);
    const agent = new Agent({ name: "a", provider, tools: [echo] });
    await agent.run(Session.fromUserMessage("hi"));
    const out = await agent.run(place(Session.fromUserMessage("hi")));
    placed.push(out);
    expect(provider.requests[0]!.tools?.map((t) => t.function.name)).toEqual(["echo"]);
    expect(provider.requests[1]!.tools?.map((t) => t.function.name)).toEqual(
      [...BUILTIN_NAMES, "echo"].sort(),
    );
    expect(SANDBOX_TOOLS.map((t) => t.name).sort()).toEqual(BUILTIN_NAMES);
  });

  it("answers a built-in tool called on an unplaced session as an unknown tool", async () => {
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: "run_shell_command", arguments: { cmd: "ls" } }] },
      { text: "ok" },
    ]);
    const out = await new Agent({ name: "a", provider }).run(Session.fromUserMessage("hi"));
    expect(bodies(out)[0]).toMatchObject({ error_kind: "unknown_tool" });
  });

  it("does not offer a user tool that needs a sandbox to an unplaced session", async () => {
    const needsBox = defineTool({
      name: "needs_box",
      description: "",
      parameters: {},
      needsSandbox: true,
      execute: async (_a, ctx) => (await ctx.sandbox()).id,
    });
    const provider = new ScriptedProvider([{ text: "ok" }]);
    await new Agent({ name: "a", provider, tools: [needsBox] }).run(Session.fromUserMessage("hi"));
    expect(provider.requests[0]!.tools).toBeUndefined();
  });
});

describe("Agent.run: provider failures, retries and aborts", () => {
  it("retries a scripted 429 with retry-after: one assistant chunk, two requests", async () => {
    const provider = new ScriptedProvider([
      { error: { code: "provider_rate_limited", retryAfterMs: 5, status: 429 } },
      { text: "ok" },
    ]);
    const out = await new Agent({ name: "a", provider }).run(Session.fromUserMessage("hi"));
    expect(provider.requests).toHaveLength(2);
    expect(provider.requests[0]).toEqual(provider.requests[1]);
    expect(out.chunks.filter((c) => c.kind === "assistant")).toHaveLength(1);
    expect(out.text()).toBe("ok");
  });

  it("fails with agent_failed after the retries, the session ending in an agent.error event", async () => {
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: "echo" }] },
      { error: { code: "provider_unavailable", message: "overloaded" } },
      { error: { code: "provider_unavailable", message: "still overloaded" } },
      { text: "too late" },
    ]);
    const agent = new Agent({
      name: "a",
      provider,
      tools: [echo],
      retry: { maxAttempts: 2, baseDelayMs: 1 },
    });
    const input = Session.fromUserMessage("hi");
    const error = await runError(agent.run(input));
    expect(provider.callCount).toBe(3);
    expect(error.code).toBe("agent_failed");
    expect(error.message).toBe('Agent "a" failed calling the model on turn 2: still overloaded');
    expect(ProviderError.isInstance(error.cause, "provider_unavailable")).toBe(true);
    expect(error.session.lineage.parents[0]!.id).toBe(input.id);
    expect(error.session.chunks.map((c) => c.kind)).toEqual(["user", "assistant", "tool_result", "event"]);
    expect(error.session.at(-1)).toMatchObject({
      kind: "event",
      name: "agent.error",
      author: "a",
      data: { agent: "a", code: "provider_unavailable", message: "still overloaded" },
    });
  });

  it("fails at once on a non-retryable provider error", async () => {
    const provider = new ScriptedProvider([{ error: { code: "provider_auth" } }, { text: "x" }]);
    const error = await runError(new Agent({ name: "a", provider }).run(Session.fromUserMessage("hi")));
    expect(error.code).toBe("agent_failed");
    expect(provider.callCount).toBe(1);
  });

  it("fails with agent_failed when the script runs out", async () => {
    const provider = new ScriptedProvider([{ toolCalls: [{ name: "echo" }] }]);
    const error = await runError(
      new Agent({ name: "a", provider, tools: [echo] }).run(Session.fromUserMessage("hi")),
    );
    expect(error.code).toBe("agent_failed");
    expect(error.session.at(-1)).toMatchObject({ name: "agent.error", data: { code: "script_exhausted" } });
  });

  it("fails with aborted when the signal fires during a model call", async () => {
    const provider = new ScriptedProvider([{ text: "slow", delayMs: 60_000 }]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 10);
    const error = await runError(
      new Agent({ name: "a", provider }).run(Session.fromUserMessage("hi"), { signal: controller.signal }),
    );
    expect(error.code).toBe("aborted");
    expect(error.message).toBe('Agent "a" was aborted calling the model on turn 1.');
    expect(error.session.at(-1)).toMatchObject({ kind: "event", name: "agent.error" });
  });

  it("fails with aborted after the running tools when the signal fires during a tool", async () => {
    const controller = new AbortController();
    let sawAbort = false;
    const slow = defineTool({
      name: "slow",
      description: "",
      parameters: {},
      execute: (_args, ctx) =>
        new Promise((resolve) => {
          ctx.signal.addEventListener("abort", () => {
            sawAbort = true;
            resolve("stopped");
          });
          setTimeout(() => controller.abort(), 5);
        }),
    });
    const provider = new ScriptedProvider([{ toolCalls: [{ name: "slow" }] }, { text: "never" }]);
    const error = await runError(
      new Agent({ name: "a", provider, tools: [slow] }).run(Session.fromUserMessage("hi"), {
        signal: controller.signal,
      }),
    );
    expect(sawAbort).toBe(true);
    expect(error.code).toBe("aborted");
    expect(error.message).toBe('Agent "a" was aborted while running tools on turn 1.');
    expect(provider.callCount).toBe(1);
    expect(error.session.chunks.map((c) => c.kind)).toEqual(["user", "assistant", "tool_result", "event"]);
  });

  it("does not call the model when the signal fired before the run", async () => {
    const provider = new ScriptedProvider([{ text: "x" }]);
    const error = await runError(
      new Agent({ name: "a", provider }).run(Session.fromUserMessage("hi"), { signal: AbortSignal.abort() }),
    );
    expect(error.code).toBe("aborted");
    expect(provider.callCount).toBe(0);
    expect((error.session.at(-1) as EventChunk).name).toBe("agent.error");
  });
});

describe("Agent.run: events", () => {
  it("reports turns, assistant chunks and tool starts and ends to onEvent, in order", async () => {
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: "echo", arguments: { text: "x" } }] },
      { text: "done" },
    ]);
    const events: RunEvent[] = [];
    await new Agent({ name: "a", provider, tools: [echo] }).run(Session.fromUserMessage("hi"), {
      onEvent: (e) => {
        if (AGENT_EVENTS.has(e.type)) events.push(e);
      },
    });
    expect(events.map((e) => e.type)).toEqual([
      "turn_start",
      "assistant",
      "tool_start",
      "tool_end",
      "turn_start",
      "assistant",
    ]);
    expect(events[2]).toEqual({
      type: "tool_start",
      agent: "a",
      callId: "call_1",
      name: "echo",
      arguments: '{"text":"x"}',
    });
    expect(events[3]).toEqual({
      type: "tool_end",
      agent: "a",
      callId: "call_1",
      name: "echo",
      content: '{"echoed":"x"}',
      isError: false,
    });
  });

  it("emits tool_start and tool_end with the error result for calls refused before running", async () => {
    const echo = defineTool<{ text: string }>({
      name: "echo",
      description: "",
      parameters: {
        type: "object",
        properties: { text: { type: "string" } },
        required: ["text"],
        additionalProperties: false,
      },
      execute: ({ text }) => ({ echoed: text }),
    });
    const provider = new ScriptedProvider([
      {
        toolCalls: [
          { name: "ghost", id: "c1" },
          { name: "echo", id: "c2", arguments: "{not json" },
          { name: "echo", id: "c3", arguments: { text: 1 } },
          { name: "echo", id: "c4", arguments: { text: "denied" } },
        ],
      },
      { text: "done" },
    ]);
    const events: RunEvent[] = [];
    const out = await new Agent({
      name: "a",
      provider,
      tools: [echo],
      toolPolicy: { maxCalls: 0 },
    }).run(Session.fromUserMessage("hi"), { onEvent: (e) => events.push(e) });
    const tools = events.filter((e) => e.type === "tool_start" || e.type === "tool_end");
    const kind = (content: string) => JSON.parse(content).error_kind;
    for (const id of ["c1", "c2", "c3", "c4"]) {
      const mine = tools.filter((e) => (e as { callId: string }).callId === id);
      expect(mine.map((e) => e.type)).toEqual(["tool_start", "tool_end"]);
      const end = mine[1] as Extract<RunEvent, { type: "tool_end" }>;
      expect(end.isError).toBe(true);
      const result = out.chunks.find((c) => c.kind === "tool_result" && c.toolCallId === id);
      expect(end.content).toBe((result as { content: string }).content);
    }
    expect(
      tools.filter((e) => e.type === "tool_end").map((e) => kind((e as { content: string }).content)),
    ).toEqual(["unknown_tool", "invalid_tool_arguments", "invalid_tool_arguments", "tool_policy_denied"]);
  });
});
