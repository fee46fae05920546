import type { ProviderDelta, ProviderRequest, ProviderV1, ReasoningItem } from "@openrath/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { anthropicProvider } from "./index.js";
import {
  type AnthropicWireServer,
  messageReply,
  type SseEvent,
  startAnthropicWireServer,
  streamEvents,
  streamReply,
  type WireMessage,
} from "./testing/anthropic-wire-server.js";

let server: AnthropicWireServer;

beforeEach(async () => {
  server = await startAnthropicWireServer();
});

afterEach(async () => {
  await server.close();
});

const provider = (options: Parameters<typeof anthropicProvider>[0] = {}): ProviderV1 =>
  anthropicProvider({ apiKey: "test-key", baseURL: server.url, model: "claude-test-1", ...options });

async function collect(stream: AsyncIterable<ProviderDelta>): Promise<ProviderDelta[]> {
  const out: ProviderDelta[] = [];
  for await (const delta of stream) out.push(delta);
  return out;
}

const thinkingTurn: WireMessage = {
  content: [
    {
      type: "thinking",
      thinking: "The user wants Oslo's weather; call the tool.",
      signature: "EqQBCgIYAh==",
    },
    { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix/LafPsn4a" },
    { type: "text", text: "Checking." },
    { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Oslo" } },
  ],
  stop_reason: "tool_use",
};

const expectedReasoning: ReasoningItem[] = [
  {
    provider: "anthropic",
    type: "thinking",
    text: "The user wants Oslo's weather; call the tool.",
    data: {
      type: "thinking",
      thinking: "The user wants Oslo's weather; call the tool.",
      signature: "EqQBCgIYAh==",
    },
  },
  {
    provider: "anthropic",
    type: "redacted_thinking",
    data: { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix/LafPsn4a" },
  },
];

const question: ProviderRequest = { messages: [{ role: "user", content: "Weather in Oslo?" }] };

describe("thinking blocks", () => {
  it("come back as reasoning items, thinking and redacted, with the signature intact", async () => {
    server.enqueue(messageReply(thinkingTurn));
    const response = await provider().complete(question);
    expect(response.reasoning).toEqual(expectedReasoning);
    expect(response.content).toBe("Checking.");
    expect(response.toolCalls).toHaveLength(1);
  });

  it("stream (thinking_delta, signature_delta) into the same reasoning items complete gives", async () => {
    server.enqueue(messageReply(thinkingTurn), streamReply(thinkingTurn));
    const completed = await provider().complete(question);
    const deltas = await collect(provider().stream!(question));
    expect(deltas.at(-1)).toEqual({ type: "response", response: completed });
    // Thinking is state for the API, not text for the caller.
    expect(deltas.filter((d) => d.type === "text").map((d) => (d as { text: string }).text)).toEqual([
      "Chec",
      "king",
      ".",
    ]);
  });

  it("go back first in the assistant turn of a tool loop, exactly as they came", async () => {
    server.enqueue(messageReply(thinkingTurn), messageReply({ content: [{ type: "text", text: "Sunny." }] }));
    const p = provider();
    const first = await p.complete(question);
    await p.complete({
      messages: [
        ...question.messages,
        {
          role: "assistant",
          content: first.content,
          tool_calls: [...first.toolCalls],
          reasoning: [...first.reasoning!],
        },
        { role: "tool", tool_call_id: "toolu_1", content: '{"ok":true,"sky":"sunny"}' },
      ],
    });
    const sent = server.requests[1]!.body.messages;
    expect(sent[1]).toEqual({
      role: "assistant",
      content: [
        thinkingTurn.content[0],
        thinkingTurn.content[1],
        { type: "text", text: "Checking." },
        { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Oslo" } },
      ],
    });
  });

  it("leave out reasoning items that another provider wrote", async () => {
    server.enqueue(messageReply({ content: [{ type: "text", text: "ok" }] }));
    await provider().complete({
      messages: [
        { role: "user", content: "Hi" },
        {
          role: "assistant",
          content: "Hello",
          reasoning: [{ provider: "openai", type: "reasoning", data: { type: "reasoning", id: "rs_1" } }],
        },
        { role: "user", content: "Again" },
      ],
    });
    expect(server.requests[0]!.body.messages[1]).toEqual({ role: "assistant", content: "Hello" });
  });
});

const searchPause: WireMessage = {
  content: [
    { type: "text", text: "Searching. " },
    { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "oslo weather" } },
  ],
  stop_reason: "pause_turn",
  usage: { input_tokens: 40, output_tokens: 10 },
};
const searchDone: WireMessage = {
  content: [
    {
      type: "web_search_tool_result",
      tool_use_id: "srvtoolu_1",
      content: [
        { type: "web_search_result", url: "https://example.com", title: "Oslo", encrypted_content: "x" },
      ],
    },
    { type: "text", text: "It is sunny." },
  ],
  stop_reason: "end_turn",
  usage: { input_tokens: 60, output_tokens: 7, cache_read_input_tokens: 40 },
};

describe("pause_turn", () => {
  it("continues the turn: the paused content goes back as-is and both parts make one response", async () => {
    server.enqueue(messageReply(searchPause), messageReply(searchDone));
    const response = await provider().complete(question);
    expect(response.content).toBe("Searching. It is sunny.");
    expect(response.finishReason).toBe("stop");
    expect(response.usage).toEqual({
      promptTokens: 140,
      completionTokens: 17,
      totalTokens: 157,
      cachedPromptTokens: 40,
    });
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]!.body.messages).toEqual([
      { role: "user", content: "Weather in Oslo?" },
      { role: "assistant", content: searchPause.content },
    ]);
  });

  it("continues a streamed turn in the same stream, numbering tool calls after the first part's", async () => {
    const pausedWithCall: WireMessage = {
      ...searchPause,
      content: [...searchPause.content, { type: "tool_use", id: "toolu_a", name: "get_time", input: {} }],
    };
    const doneWithCall: WireMessage = {
      ...searchDone,
      content: [...searchDone.content, { type: "tool_use", id: "toolu_b", name: "get_weather", input: {} }],
      stop_reason: "tool_use",
    };
    server.enqueue(streamReply(pausedWithCall), streamReply(doneWithCall));
    const deltas = await collect(provider().stream!(question));
    const calls = deltas.filter((d) => d.type === "tool_call" && d.id !== undefined);
    expect(calls).toEqual([
      { type: "tool_call", index: 0, id: "toolu_a", name: "get_time" },
      { type: "tool_call", index: 1, id: "toolu_b", name: "get_weather" },
    ]);
    const last = deltas.at(-1)!;
    expect(last.type === "response" && last.response).toMatchObject({
      content: "Searching. It is sunny.",
      finishReason: "tool_calls",
      toolCalls: [{ id: "toolu_a" }, { id: "toolu_b" }],
      usage: { promptTokens: 140, completionTokens: 17 },
    });
    expect(server.requests[1]!.body.messages.at(-1)).toEqual({
      role: "assistant",
      content: pausedWithCall.content,
    });
  });

  it("stops continuing after maxPauseContinuations and reports the unfinished turn as length", async () => {
    server.enqueue(messageReply(searchPause), messageReply(searchPause));
    const response = await provider({ maxPauseContinuations: 1 }).complete(question);
    expect(server.requests).toHaveLength(2);
    expect(response.finishReason).toBe("length");
    expect(() => provider({ maxPauseContinuations: -1 })).toThrow(/maxPauseContinuations/);
  });
});

describe("usage", () => {
  it("is missing, not zero, when a stream's events carry none", async () => {
    const events: SseEvent[] = streamEvents({ content: [{ type: "text", text: "ok" }] }).map((e) => {
      if (!("event" in e)) return e;
      const data = { ...(e.data as Record<string, unknown>) };
      if (data.type === "message_start") {
        const { usage: _, ...message } = data.message as Record<string, unknown>;
        data.message = message;
      }
      if (data.type === "message_delta") delete data.usage;
      return { event: e.event, data };
    });
    server.enqueue({ type: "stream", events });
    const last = (await collect(provider().stream!(question))).at(-1)!;
    expect(last.type === "response" && last.response).not.toHaveProperty("usage");
  });
});
