import {
  Agent,
  type AgentEvent,
  AgentRunError,
  BudgetExceededError,
  defineTool,
  type ProviderDelta,
  ProviderError,
  type ProviderResponse,
  type ProviderV1,
  type RunEvent,
  ScriptedProvider,
  Session,
} from "@openrath/core";
import { describe, expect, it } from "vitest";

async function collect(stream: AsyncIterable<AgentEvent>): Promise<AgentEvent[]> {
  const out: AgentEvent[] = [];
  for await (const event of stream) out.push(event);
  return out;
}

async function streamError(
  stream: AsyncIterable<AgentEvent>,
): Promise<{ events: AgentEvent[]; error: unknown }> {
  const events: AgentEvent[] = [];
  try {
    for await (const event of stream) events.push(event);
  } catch (error) {
    return { events, error };
  }
  throw new Error("expected the stream to fail");
}

const lastSession = (events: AgentEvent[]): Session => {
  const last = events.at(-1);
  if (last?.type !== "session") throw new Error(`last event is ${last?.type}`);
  return last.session;
};

const add = defineTool<{ a: number; b: number }>({
  name: "add",
  description: "Add two numbers",
  parameters: {
    type: "object",
    properties: { a: { type: "number" }, b: { type: "number" } },
    required: ["a", "b"],
  },
  execute: ({ a, b }, ctx) => {
    ctx.emit({ adding: [a, b] });
    return { sum: a + b };
  },
});

describe("Agent.stream", () => {
  it("yields text deltas that concatenate to the final text, and ends with the session", async () => {
    const text = "The quick brown fox jumps over the lazy dog.";
    const provider = new ScriptedProvider([{ text }], "scripted", { chunkSize: 5 });
    const events = await collect(new Agent({ name: "a", provider }).stream(Session.fromUserMessage("hi")));
    const deltas = events.filter((e) => e.type === "text_delta");
    expect(deltas.length).toBe(Math.ceil(text.length / 5));
    expect(deltas.map((e) => (e.type === "text_delta" ? e.text : "")).join("")).toBe(text);
    expect(lastSession(events).text()).toBe(text);
    expect(events.filter((e) => e.type === "session")).toHaveLength(1);
  });

  it("yields tool-call deltas, then tool starts and ends, turn by turn", async () => {
    const provider = new ScriptedProvider([
      { text: "Adding.", toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }] },
      { text: "5" },
    ]);
    const events = await collect(
      new Agent({ name: "calc", provider, tools: [add] }).stream(Session.fromUserMessage("2+3?")),
    );
    expect(events.map((e) => e.type)).toEqual([
      "turn_start",
      "text_delta",
      "tool_call_delta",
      "tool_call_delta",
      "assistant",
      "tool_start",
      "tool_progress",
      "tool_end",
      "turn_start",
      "text_delta",
      "assistant",
      "session",
    ]);
    const callDeltas = events.filter((e) => e.type === "tool_call_delta");
    expect(callDeltas[0]).toEqual({
      type: "tool_call_delta",
      agent: "calc",
      index: 0,
      id: "call_1",
      name: "add",
      arguments: '{"a":2,',
    });
    expect(callDeltas[1]).toEqual({ type: "tool_call_delta", agent: "calc", index: 0, arguments: '"b":3}' });
    expect(events[0]).toEqual({ type: "turn_start", agent: "calc", turn: 1 });
    expect(events[8]).toEqual({ type: "turn_start", agent: "calc", turn: 2 });
    expect(events[6]).toEqual({
      type: "tool_progress",
      agent: "calc",
      callId: "call_1",
      name: "add",
      data: { adding: [2, 3] },
    });
    expect(events[7]).toMatchObject({ type: "tool_end", content: '{"sum":5}', isError: false });
    const session = lastSession(events);
    expect(session.text()).toBe("5");
    const assistant = events[4];
    expect(assistant?.type === "assistant" && assistant.chunk).toBe(session.at(1));
  });

  it("gives the same transcript and request fingerprints as run()", async () => {
    const script = [{ toolCalls: [{ name: "add", arguments: { a: 1, b: 1 } }] }, { text: "two" }];
    const input = Session.fromUserMessage("1+1?");
    const viaRun = await new Agent({ name: "a", provider: new ScriptedProvider(script), tools: [add] }).run(
      input,
    );
    const events = await collect(
      new Agent({ name: "a", provider: new ScriptedProvider(script), tools: [add] }).stream(input),
    );
    const strip = (s: Session) => s.chunks.map(({ id: _i, createdAt: _c, sessionId: _s, ...rest }) => rest);
    expect(strip(lastSession(events))).toEqual(strip(viaRun));
  });

  it("also hands every event to RunOptions.onEvent", async () => {
    const seen: RunEvent[] = [];
    const provider = new ScriptedProvider([{ text: "hello" }]);
    const events = await collect(
      new Agent({ name: "a", provider }).stream(Session.fromUserMessage("hi"), {
        onEvent: (e) => seen.push(e),
      }),
    );
    expect(seen).toEqual(events.slice(0, -1));
  });

  it("throws the run's error from the iterator after the events so far", async () => {
    const provider = new ScriptedProvider([{ toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }] }]);
    const { events, error } = await streamError(
      new Agent({ name: "a", provider, tools: [add] }).stream(Session.fromUserMessage("hi")),
    );
    expect(error).toBeInstanceOf(AgentRunError);
    expect((error as AgentRunError).code).toBe("agent_failed");
    expect((error as AgentRunError).session.at(-1)).toMatchObject({ name: "agent.error" });
    expect(events.map((e) => e.type)).toContain("tool_end");
    expect(events.some((e) => e.type === "session")).toBe(false);
  });

  it("throws a budget stop from the iterator", async () => {
    const provider = new ScriptedProvider([{ text: "x" }]);
    const agent = new Agent({ name: "a", provider, budget: { maxTokens: 0 } });
    const { error } = await streamError(agent.stream(Session.fromUserMessage("hi")));
    expect(error).toBeInstanceOf(BudgetExceededError);
  });

  it("fails the iterator with aborted when the signal fires", async () => {
    const controller = new AbortController();
    const provider = new ScriptedProvider([{ text: "slow", delayMs: 60_000 }]);
    setTimeout(() => controller.abort(), 10);
    const { error } = await streamError(
      new Agent({ name: "a", provider }).stream(Session.fromUserMessage("hi"), { signal: controller.signal }),
    );
    expect((error as AgentRunError).code).toBe("aborted");
  });
});

/** A streaming provider whose attempts follow a list: deltas, then an error or nothing. */
function scriptedStream(
  attempts: { deltas: ProviderDelta[]; error?: Error }[],
): ProviderV1 & { opens: number } {
  const provider = {
    specVersion: "v1" as const,
    name: "stream-only",
    model: "m",
    opens: 0,
    async complete(): Promise<ProviderResponse> {
      throw new Error("not used");
    },
    async *stream(): AsyncGenerator<ProviderDelta> {
      const attempt = attempts[provider.opens++];
      if (!attempt) throw new Error("no more attempts");
      for (const delta of attempt.deltas) yield delta;
      if (attempt.error) throw attempt.error;
    },
  };
  return provider;
}

const done = (content: string): ProviderDelta => ({
  type: "response",
  response: { content, toolCalls: [], finishReason: "stop", model: "m" },
});

describe("Agent.stream: provider streams", () => {
  it("retries a stream that fails before its first delta", async () => {
    const provider = scriptedStream([
      { deltas: [], error: new ProviderError("provider_connection", "reset", { retryAfterMs: 1 }) },
      { deltas: [{ type: "text", text: "ok" }, done("ok")] },
    ]);
    const events = await collect(new Agent({ name: "a", provider }).stream(Session.fromUserMessage("hi")));
    expect(provider.opens).toBe(2);
    expect(lastSession(events).text()).toBe("ok");
  });

  it("fails the run when a stream breaks after its first delta, without replaying it", async () => {
    const provider = scriptedStream([
      { deltas: [{ type: "text", text: "par" }], error: new ProviderError("provider_stream", "cut") },
      { deltas: [{ type: "text", text: "partial" }, done("partial")] },
    ]);
    const { events, error } = await streamError(
      new Agent({ name: "a", provider }).stream(Session.fromUserMessage("hi")),
    );
    expect(provider.opens).toBe(1);
    expect(events.filter((e) => e.type === "text_delta")).toHaveLength(1);
    expect((error as AgentRunError).code).toBe("agent_failed");
    expect(ProviderError.isInstance((error as AgentRunError).cause, "provider_stream")).toBe(true);
  });

  it("fails the run when a stream ends without a response", async () => {
    const provider = scriptedStream([{ deltas: [{ type: "text", text: "dangling" }] }]);
    const { error } = await streamError(
      new Agent({ name: "a", provider }).stream(Session.fromUserMessage("hi")),
    );
    expect((error as AgentRunError).code).toBe("agent_failed");
    expect((error as AgentRunError).message).toContain(
      'The "stream-only" stream ended without a final response.',
    );
  });

  it("falls back to complete() for a provider without stream, as one text delta", async () => {
    const provider: ProviderV1 = {
      specVersion: "v1",
      name: "plain",
      model: "m",
      complete: async () => ({ content: "whole", toolCalls: [], finishReason: "stop", model: "m" }),
    };
    const events = await collect(new Agent({ name: "a", provider }).stream(Session.fromUserMessage("hi")));
    expect(events.map((e) => e.type)).toEqual(["turn_start", "text_delta", "assistant", "session"]);
  });
});

describe("Agent.run with streaming: true", () => {
  it("streams from the provider and reports the deltas to onEvent", async () => {
    const provider = new ScriptedProvider([{ text: "0123456789" }], "scripted", { chunkSize: 3 });
    const seen: RunEvent[] = [];
    const out = await new Agent({ name: "a", provider, streaming: true }).run(Session.fromUserMessage("hi"), {
      onEvent: (e) => seen.push(e),
    });
    expect(seen.filter((e) => e.type === "text_delta")).toHaveLength(4);
    expect(out.text()).toBe("0123456789");
  });

  it("does not stream from run() by default", async () => {
    const provider = new ScriptedProvider([{ text: "0123456789" }]);
    const seen: RunEvent[] = [];
    await new Agent({ name: "a", provider }).run(Session.fromUserMessage("hi"), {
      onEvent: (e) => seen.push(e),
    });
    const loopEvents = new Set(["turn_start", "text_delta", "tool_call_delta", "assistant"]);
    expect(seen.map((e) => e.type).filter((t) => loopEvents.has(t))).toEqual(["turn_start", "assistant"]);
  });

  it("honours the agent's retry policy when streaming", async () => {
    const provider = new ScriptedProvider([{ error: { code: "provider_unavailable" } }, { text: "retried" }]);
    const retries: number[] = [];
    const agent = new Agent({
      name: "a",
      provider,
      retry: { maxAttempts: 1, onRetry: ({ attempt }) => retries.push(attempt) },
    });
    const { error } = await streamError(agent.stream(Session.fromUserMessage("hi")));
    expect((error as AgentRunError).code).toBe("agent_failed");
    expect(provider.callCount).toBe(1);
  });

  it("honours the agent's retry policy in run() without streaming", async () => {
    const provider = new ScriptedProvider([{ error: { code: "provider_unavailable" } }, { text: "retried" }]);
    const agent = new Agent({ name: "a", provider, retry: { maxAttempts: 1 } });
    await expect(agent.run(Session.fromUserMessage("hi"))).rejects.toMatchObject({ code: "agent_failed" });
    expect(provider.callCount).toBe(1);
  });
});
