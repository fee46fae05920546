import { getEventListeners } from "node:events";
import {
  Agent,
  AgentRunError,
  type CallHooks,
  defineTool,
  type ProviderRequest,
  type ProviderV1,
  type RunEvent,
  type RunOptions,
  ScriptedProvider,
  Session,
  type ToolResultChunk,
  Workflow,
} from "@openrath/core";
import { streamProvider } from "@openrath/core/backend";
import { describe, expect, it } from "vitest";

/** A provider that always asks for `tool` again, after `delayMs`. */
const looping = (tool: string, delayMs = 2) =>
  new ScriptedProvider(() => ({ toolCalls: [{ name: tool, arguments: {} }], delayMs }));

const counted = () => {
  const ran = { count: 0 };
  const tool = defineTool({
    name: "tick",
    description: "",
    parameters: {},
    execute: () => ({ tick: ++ran.count }),
  });
  return { ran, tool };
};

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

const results = (session: Session) =>
  session.chunks
    .filter((c): c is ToolResultChunk => c.kind === "tool_result")
    .map((c) => ({ id: c.toolCallId, body: JSON.parse(c.content) }));

describe("leaving a stream early", () => {
  it("aborts the agent's run: no further model or tool calls after the consumer breaks", async () => {
    const { ran, tool } = counted();
    const provider = looping("tick");
    const agent = new Agent({ name: "a", provider, tools: [tool], maxTurns: 30 });
    for await (const event of agent.stream(Session.fromUserMessage("go"))) {
      if (event.type === "tool_end") break;
    }
    const calls = provider.callCount;
    const ticks = ran.count;
    await settle(80);
    // Before the fix the run went on to all 30 turns after the consumer left.
    expect(provider.callCount).toBe(calls);
    expect(ran.count).toBe(ticks);
    expect(provider.callCount).toBeLessThanOrEqual(2);
  });

  it("aborts a workflow's run and every agent in it", async () => {
    const { ran, tool } = counted();
    const provider = looping("tick");
    class Flow extends Workflow {
      worker = new Agent({ name: "w", provider, tools: [tool], maxTurns: 30 });
      async forward(session: Session, options: RunOptions) {
        return this.worker.run(session, options);
      }
    }
    for await (const event of new Flow().stream(Session.fromUserMessage("go"))) {
      if (event.type === "tool_end") break;
    }
    const calls = provider.callCount;
    await settle(80);
    expect(provider.callCount).toBe(calls);
    expect(ran.count).toBeLessThanOrEqual(2);
  });

  it("still aborts when the caller's own signal fires", async () => {
    const provider = looping("tick", 50);
    const { tool } = counted();
    const controller = new AbortController();
    const agent = new Agent({ name: "a", provider, tools: [tool] });
    const stream = agent.stream(Session.fromUserMessage("go"), { signal: controller.signal });
    setTimeout(() => controller.abort(), 10);
    let error: unknown;
    try {
      for await (const _ of stream) {
        // drain
      }
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AgentRunError);
    expect((error as AgentRunError).code).toBe("aborted");
  });
});

describe("aborts with tools and providers that ignore the signal", () => {
  it("returns promptly when a tool ignores its AbortSignal, recording the call as aborted", async () => {
    const stuck = defineTool({
      name: "stuck",
      description: "",
      parameters: {},
      // Never settles and never looks at ctx.signal.
      execute: () => new Promise(() => {}),
    });
    const later = defineTool({ name: "later", description: "", parameters: {}, execute: () => "ran" });
    const provider = new ScriptedProvider([
      {
        toolCalls: [
          { name: "stuck", id: "s" },
          { name: "later", id: "l" },
        ],
      },
      { text: "never" },
    ]);
    const controller = new AbortController();
    const agent = new Agent({ name: "a", provider, tools: [stuck, later] });
    const events: RunEvent[] = [];
    const run = agent.run(Session.fromUserMessage("go"), {
      signal: controller.signal,
      onEvent: (e) => {
        events.push(e);
        if (e.type === "tool_start" && e.name === "stuck") setTimeout(() => controller.abort(), 5);
      },
    });
    const started = Date.now();
    const error = await run.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(Date.now() - started).toBeLessThan(1000);
    expect(error).toBeInstanceOf(AgentRunError);
    const failed = error as AgentRunError;
    expect(failed.code).toBe("aborted");
    // The stuck call is recorded as abandoned; the call queued behind it in its lane never started.
    expect(results(failed.session)).toEqual([
      {
        id: "s",
        body: {
          ok: false,
          error_kind: "aborted",
          message: 'The run was aborted while "stuck" was running; its result was abandoned.',
        },
      },
      {
        id: "l",
        body: {
          ok: false,
          error_kind: "tool_not_started",
          message: 'The run was aborted before "later" started.',
        },
      },
    ]);
    expect(failed.session.at(-1)).toMatchObject({ name: "agent.error", data: { code: "aborted" } });
    expect(provider.callCount).toBe(1);
    const ends = events.filter((e) => e.type === "tool_end").map((e) => (e as { callId: string }).callId);
    expect(ends).toEqual(["s", "l"]);
  }, 5000);

  it("returns promptly when the provider ignores its AbortSignal", async () => {
    const deaf: ProviderV1 = {
      specVersion: "v1",
      name: "deaf",
      model: "deaf",
      complete: () => new Promise(() => {}),
    };
    const controller = new AbortController();
    const run = new Agent({ name: "a", provider: deaf }).run(Session.fromUserMessage("go"), {
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 5);
    const error = await run.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AgentRunError);
    expect((error as AgentRunError).code).toBe("aborted");
  }, 5000);

  it("returns promptly when a streaming provider stops sending and ignores the signal", async () => {
    const deaf: ProviderV1 = {
      specVersion: "v1",
      name: "deaf",
      model: "deaf",
      complete: () => new Promise(() => {}),
      async *stream() {
        yield { type: "text", text: "Hel" };
        await new Promise(() => {});
      },
    };
    const agent = new Agent({ name: "a", provider: deaf });
    const controller = new AbortController();
    let error: unknown;
    try {
      for await (const event of agent.stream(Session.fromUserMessage("go"), { signal: controller.signal })) {
        if (event.type === "text_delta") controller.abort();
      }
    } catch (e) {
      error = e;
    }
    expect((error as AgentRunError).code).toBe("aborted");
  }, 5000);
});

describe("closing provider streams", () => {
  it("closes a provider's stream once it has the response, as for await would", async () => {
    let closed = 0;
    const provider: ProviderV1 = {
      specVersion: "v1",
      name: "closing",
      model: "m",
      complete: () => Promise.reject(new Error("stream only")),
      async *stream() {
        try {
          yield { type: "text", text: "hi" };
          yield {
            type: "response",
            response: { content: "hi", toolCalls: [], finishReason: "stop", model: "m" },
          };
          yield { type: "text", text: "never read" };
        } finally {
          closed++;
        }
      },
    };
    const out = await new Agent({ name: "a", provider, streaming: true }).run(Session.fromUserMessage("go"));
    expect(out.text()).toBe("hi");
    await settle(5);
    expect(closed).toBe(1);
  });
});

describe("streamProvider", () => {
  it("ends the call when its consumer stops reading", async () => {
    let signal: AbortSignal | undefined;
    let closed = false;
    const provider: ProviderV1 = {
      specVersion: "v1",
      name: "slow",
      model: "m",
      complete: () => Promise.reject(new Error("stream only")),
      async *stream(_request, options) {
        signal = options?.signal;
        try {
          yield { type: "text", text: "a" };
          // Waits for the abort, then tries to go on: the stream must be closed by then.
          await new Promise((resolve) => options?.signal?.addEventListener("abort", resolve));
          yield { type: "text", text: "b" };
        } finally {
          closed = true;
        }
      },
    };
    for await (const delta of streamProvider(provider, { messages: [] })) {
      expect(delta).toEqual({ type: "text", text: "a" });
      break;
    }
    await settle(5);
    expect(signal?.aborted).toBe(true);
    expect(closed).toBe(true);
  });
});

describe("a signal shared by many runs", () => {
  it("holds one abort listener however many runs, calls and tools race against it", async () => {
    const { tool } = counted();
    const controller = new AbortController();
    const agent = new Agent({
      name: "a",
      provider: new ScriptedProvider((_r, call) =>
        call % 2 === 0 ? { toolCalls: [{ name: "tick" }] } : { text: "ok" },
      ),
      tools: [tool],
    });
    for (let i = 0; i < 20; i++) {
      await agent.run(Session.fromUserMessage("go"), { signal: controller.signal });
      for await (const _ of agent.stream(Session.fromUserMessage("go"), { signal: controller.signal })) {
        // drain
      }
    }
    expect(getEventListeners(controller.signal, "abort").length).toBeLessThanOrEqual(1);
  });
});

describe("the call seam (RunOptions.calls)", () => {
  it("sends every model call and tool call through the hooks, with positions and fingerprints", async () => {
    const { ran, tool } = counted();
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: "tick" }, { name: "tick" }] },
      { text: "done" },
    ]);
    const seen: string[] = [];
    const calls: CallHooks = {
      async model(call, next) {
        seen.push(`model ${call.by} #${call.position.index} ${call.fingerprint.length}`);
        return next();
      },
      async tool(dispatch, next) {
        seen.push(`tool ${dispatch.call.function.name} #${dispatch.position.index}.${dispatch.order}`);
        return next();
      },
    };
    const out = await new Agent({ name: "a", provider, tools: [tool] }).run(Session.fromUserMessage("go"), {
      calls,
    });
    expect(seen).toEqual(["model a #0 28", "tool tick #0.0", "tool tick #0.1", "model a #1 28"]);
    expect(ran.count).toBe(2);
    expect(out.text()).toBe("done");
  });

  it("lets a hook answer a call without the provider or the tool (as a journal replay would)", async () => {
    const { ran, tool } = counted();
    const provider = new ScriptedProvider([]);
    const branches = new Set<string>();
    const calls: CallHooks = {
      async model(call) {
        branches.add(call.position.branch);
        return call.position.index === 0
          ? {
              content: null,
              toolCalls: [{ id: "j1", type: "function", function: { name: "tick", arguments: "{}" } }],
              finishReason: "tool_calls",
              model: "journal",
            }
          : { content: "from the journal", toolCalls: [], finishReason: "stop", model: "journal" };
      },
      async tool() {
        return { content: '{"tick":"journaled"}', isError: false };
      },
    };
    const out = await new Agent({ name: "a", provider, tools: [tool] }).run(Session.fromUserMessage("go"), {
      calls,
    });
    expect(provider.callCount).toBe(0);
    expect(ran.count).toBe(0);
    expect(out.text()).toBe("from the journal");
    expect(results(out)).toEqual([{ id: "j1", body: { tick: "journaled" } }]);
    expect(branches.size).toBe(1);
  });

  it("gives parallel forks different branches and a rerun of the same code the same ones", async () => {
    const positions = async () => {
      const seen: string[] = [];
      const calls: CallHooks = {
        async model(call, next) {
          seen.push(call.position.branch);
          return next();
        },
      };
      const agent = new Agent({ name: "a", provider: new ScriptedProvider(() => ({ text: "ok" })) });
      class Pair extends Workflow {
        agent = agent;
        async forward(session: Session, options: RunOptions) {
          const [x, y] = await Promise.all([
            this.agent.run(session.fork(), options),
            this.agent.run(session.fork(), options),
          ]);
          return x.merge(y);
        }
      }
      await new Pair().run(Session.fromUserMessage("hi"), { calls });
      return seen;
    };
    const first = await positions();
    const second = await positions();
    expect(new Set(first).size).toBe(2);
    expect(second).toEqual(first);
  });
});

describe("a per-session tool call budget", () => {
  it("counts the calls already in the session, so a second run on it does not start afresh", async () => {
    const { ran, tool } = counted();
    const script = [{ toolCalls: [{ name: "tick" }] }, { text: "done" }];
    const provider = new ScriptedProvider([...script, ...script]);
    const agent = new Agent({ name: "g", provider, tools: [tool], toolPolicy: { maxCalls: 1 } });
    const first = await agent.run(Session.fromUserMessage("one"));
    const second = await agent.run(first.append({ kind: "user", content: "again" }));
    expect(ran.count).toBe(1);
    expect(results(second).at(-1)!.body.message).toContain("the call budget of 1 tool calls is spent");
  });

  it("counts each fork on its own from where it forked", async () => {
    const { ran, tool } = counted();
    const provider = new ScriptedProvider((_request: ProviderRequest, call: number) =>
      call < 2 ? { toolCalls: [{ name: "tick" }] } : { text: "done" },
    );
    const agent = new Agent({ name: "g", provider, tools: [tool], toolPolicy: { maxCalls: 1 } });
    const root = Session.fromUserMessage("go");
    await Promise.all([agent.run(root.fork()), agent.run(root.fork())]);
    expect(ran.count).toBe(2);
  });
});
