import { type ProviderDelta, ProviderError, type ProviderRequest, type ToolSpec } from "@openrath/core";
import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openaiProvider } from "./index.js";
import {
  responseBody,
  responseErrorEvent,
  responseEvents,
  type WireResponse,
} from "./testing/openai-responses-wire.js";
import { type OpenAIWireServer, startOpenAIWireServer } from "./testing/openai-wire-server.js";

let server: OpenAIWireServer;

beforeEach(async () => {
  server = await startOpenAIWireServer();
});

afterEach(async () => {
  await server.close();
});

const provider = (options: Parameters<typeof openaiProvider>[0] = {}) =>
  openaiProvider({
    api: "responses",
    baseURL: server.baseURL,
    apiKey: "sk-test",
    model: "gpt-5-mini",
    ...options,
  });

const tool: ToolSpec = {
  type: "function",
  function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
};

const question: ProviderRequest = {
  messages: [{ role: "user", content: "Weather in Oslo?" }],
  tools: [tool],
};

const reasonedCall: WireResponse = {
  reasoning: { id: "rs_1", summary: ["Need the weather tool."], encryptedContent: "gAAAA-opaque" },
  content: ["Checking."],
  toolCalls: [{ id: "call_1", name: "get_weather", arguments: ['{"city":', '"Oslo"}'] }],
  usage: { input_tokens: 40, output_tokens: 30, cached_tokens: 8, reasoning_tokens: 22 },
};

async function collect(stream: AsyncIterable<ProviderDelta>): Promise<ProviderDelta[]> {
  const out: ProviderDelta[] = [];
  for await (const delta of stream) out.push(delta);
  return out;
}

async function failure(stream: AsyncIterable<ProviderDelta>): Promise<ProviderError> {
  try {
    for await (const _ of stream);
  } catch (error) {
    expect(ProviderError.isInstance(error)).toBe(true);
    return error as ProviderError;
  }
  throw new Error("the stream did not fail");
}

describe("Responses API: the wire fake", () => {
  it("is faithful enough for the SDK's own stream helper to assemble the final response", async () => {
    server.enqueue({ type: "stream", events: responseEvents(reasonedCall), done: false });
    const client = new OpenAI({ apiKey: "sk-test", baseURL: server.baseURL, maxRetries: 0 });
    const final = await client.responses.stream({ model: "gpt-5-mini", input: "hi" }).finalResponse();
    expect(final.output.map((o) => o.type)).toEqual(["reasoning", "message", "function_call"]);
    expect(final.output_text).toBe("Checking.");
    expect(final).toMatchObject(responseBody(reasonedCall));
  });
});

describe("Responses API: request mapping", () => {
  it("posts input items, flat function tools (strict false unless set) and max_output_tokens to /responses", async () => {
    server.enqueue({ type: "json", body: responseBody({ content: ["ok"] }) });
    await provider().complete({
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Weather?" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "get_weather", arguments: "{}" } },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: '{"ok":true}' },
      ],
      tools: [tool],
      toolChoice: { name: "get_weather" },
      maxTokens: 99,
      seed: 4,
      responseFormat: { type: "json_schema", name: "answer", schema: { type: "object" }, strict: true },
    });
    const request = server.requests[0]!;
    expect(request.path).toBe("/v1/responses");
    expect(request.body).toEqual({
      model: "gpt-5-mini",
      input: [
        { type: "message", role: "system", content: "Be brief." },
        { type: "message", role: "user", content: "Weather?" },
        { type: "function_call", call_id: "call_1", name: "get_weather", arguments: "{}" },
        { type: "function_call_output", call_id: "call_1", output: '{"ok":true}' },
      ],
      tools: [{ type: "function", name: "get_weather", parameters: tool.function.parameters, strict: false }],
      tool_choice: { type: "function", name: "get_weather" },
      max_output_tokens: 99,
      text: { format: { type: "json_schema", name: "answer", schema: { type: "object" }, strict: true } },
    });
  });

  it("refuses stop sequences, which the Responses API does not have, before sending anything", async () => {
    await expect(provider().complete({ ...question, stop: ["END"] })).rejects.toMatchObject({
      code: "provider_bad_request",
    });
    await expect(collect(provider({ stop: ["END"] }).stream!(question))).rejects.toMatchObject({
      code: "provider_bad_request",
    });
    expect(server.requests).toHaveLength(0);
  });

  it("rejects an api that is neither chat nor responses", () => {
    expect(() => provider({ api: "completions" as never })).toThrow(
      /"api" is "completions"; invalid option: expected one of "chat"\|"responses"/,
    );
  });
});

describe("Responses API: responses", () => {
  it("maps text, the call, usage with cached and reasoning tokens, and keeps the output for the next turn", async () => {
    server.enqueue({ type: "json", body: responseBody(reasonedCall) });
    const response = await provider().complete(question);
    expect(response).toMatchObject({
      content: "Checking.",
      toolCalls: [
        { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } },
      ],
      finishReason: "tool_calls",
      model: "gpt-5-mini-2025-08-07",
      usage: {
        promptTokens: 40,
        completionTokens: 30,
        totalTokens: 70,
        cachedPromptTokens: 8,
        reasoningTokens: 22,
      },
    });
    expect(response.reasoning).toHaveLength(1);
    const [item] = response.reasoning!;
    expect(item).toMatchObject({
      provider: "openai",
      type: "responses.output",
      text: "Need the weather tool.",
    });
    const output = (item!.data as { output: Record<string, unknown>[] }).output;
    expect(output.map((o) => o.type)).toEqual(["reasoning", "message", "function_call"]);
    expect(output[0]).toMatchObject({ id: "rs_1", encrypted_content: "gAAAA-opaque" });
    expect(output[2]).toEqual({ type: "function_call", id: "fc_wire0000", call_id: "call_1" });
  });

  it("keeps nothing extra for a turn without reasoning", async () => {
    server.enqueue({ type: "json", body: responseBody({ content: ["Hi."] }) });
    expect(await provider().complete(question)).not.toHaveProperty("reasoning");
  });

  it("maps incomplete to length or content_filter, and a refusal to content_filter", async () => {
    server.enqueue(
      { type: "json", body: responseBody({ content: ["Clear"], incomplete: "max_output_tokens" }) },
      { type: "json", body: responseBody({ content: [""], incomplete: "content_filter" }) },
      { type: "json", body: responseBody({ refusal: "I can't help with that." }) },
    );
    const p = provider();
    expect((await p.complete(question)).finishReason).toBe("length");
    expect((await p.complete(question)).finishReason).toBe("content_filter");
    expect(await p.complete(question)).toMatchObject({
      content: "I can't help with that.",
      finishReason: "content_filter",
    });
  });

  it("reports no usage when the response has none", async () => {
    server.enqueue({ type: "json", body: responseBody({ content: ["x"], usage: null }) });
    expect(await provider().complete(question)).not.toHaveProperty("usage");
  });
});

describe("Responses API: the next turn", () => {
  it("sends the turn back item by item with ids: reasoning, message, function call, then the result", async () => {
    server.enqueue(
      { type: "json", body: responseBody(reasonedCall) },
      { type: "json", body: responseBody({ content: ["Sunny."] }) },
    );
    const p = provider();
    const first = await p.complete(question);
    await p.complete({
      ...question,
      messages: [
        ...question.messages,
        {
          role: "assistant",
          content: first.content,
          tool_calls: [...first.toolCalls],
          reasoning: [...first.reasoning!],
        },
        { role: "tool", tool_call_id: "call_1", content: '{"sky":"clear"}' },
      ],
    });
    const sent = responseBody(reasonedCall).output;
    expect(server.requests[1]!.body.input).toEqual([
      { type: "message", role: "user", content: "Weather in Oslo?" },
      sent[0],
      sent[1],
      {
        type: "function_call",
        id: "fc_wire0000",
        call_id: "call_1",
        name: "get_weather",
        arguments: '{"city":"Oslo"}',
      },
      { type: "function_call_output", call_id: "call_1", output: '{"sky":"clear"}' },
    ]);
  });

  it("sends a changed text as one plain message, and never reasoning the server cannot resolve with store: false", async () => {
    server.enqueue({
      type: "json",
      body: responseBody({ ...reasonedCall, reasoning: { id: "rs_2", summary: ["x"] } }),
    });
    const p = provider();
    const first = await p.complete(question);
    server.enqueue(
      { type: "json", body: responseBody({ content: ["ok"] }) },
      { type: "json", body: responseBody({ content: ["ok"] }) },
    );
    const next = (content: string) => ({
      ...question,
      messages: [
        ...question.messages,
        {
          role: "assistant" as const,
          content,
          tool_calls: [...first.toolCalls],
          reasoning: [...first.reasoning!],
        },
        { role: "tool" as const, tool_call_id: "call_1", content: "{}" },
      ],
    });
    await p.complete(next("Edited."));
    expect(server.requests[1]!.body.input.slice(1, 4)).toMatchObject([
      { type: "reasoning", id: "rs_2" },
      { type: "message", role: "assistant", content: "Edited." },
      { type: "function_call", id: "fc_wire0000", call_id: "call_1" },
    ]);
    // Without store, a reasoning item lacking encrypted_content cannot be looked up: none of the stored output goes.
    await p.complete({ ...next("Checking."), extra: { store: false } });
    expect(server.requests[2]!.body.input.slice(1, 3)).toEqual([
      { type: "message", role: "assistant", content: "Checking." },
      { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Oslo"}' },
    ]);
  });
});

describe("Responses API: streaming", () => {
  it("yields text and tool-call deltas, not reasoning summaries, and ends with complete's response", async () => {
    server.enqueue(
      { type: "json", body: responseBody(reasonedCall) },
      { type: "stream", events: responseEvents(reasonedCall), done: false },
    );
    const completed = await provider().complete(question);
    const deltas = await collect(provider().stream!(question));
    expect(deltas.slice(0, -1)).toEqual([
      { type: "text", text: "Checking." },
      { type: "tool_call", index: 0, id: "call_1", name: "get_weather" },
      { type: "tool_call", index: 0, arguments: '{"city":' },
      { type: "tool_call", index: 0, arguments: '"Oslo"}' },
    ]);
    expect(deltas.at(-1)).toEqual({ type: "response", response: completed });
  });

  it("fails by the error event's code, and a response.failed by its error", async () => {
    server.enqueue({
      type: "stream",
      events: [
        ...responseEvents({ content: ["a"] }).slice(0, 2),
        responseErrorEvent("rate_limit_exceeded", "Slow down."),
      ],
      done: false,
    });
    const limited = await failure(provider().stream!(question));
    expect(limited).toMatchObject({ code: "provider_rate_limited", retryable: true });
    const failed = {
      ...responseBody({}),
      status: "failed",
      error: { code: "server_error", message: "Boom." },
    };
    server.enqueue({
      type: "stream",
      events: [
        ...responseEvents({}).slice(0, 2),
        { event: "response.failed", data: { type: "response.failed", response: failed, sequence_number: 3 } },
      ],
      done: false,
    });
    const unavailable = await failure(provider().stream!(question));
    expect(unavailable.code).toBe("provider_unavailable");
    expect(unavailable.message).toContain("Boom.");
  });

  it("fails with provider_stream when the stream ends before response.completed", async () => {
    const events = responseEvents({ content: ["partial"] });
    server.enqueue({ type: "stream", events: events.slice(0, -1), done: false });
    const error = await failure(provider().stream!(question));
    expect(error).toMatchObject({ code: "provider_stream", retryable: false });
  });
});
