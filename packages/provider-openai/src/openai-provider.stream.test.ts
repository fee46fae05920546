import { type ProviderDelta, ProviderError, type ProviderRequest } from "@openrath/core";
import { streamProvider } from "@openrath/core/backend";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openaiProvider } from "./index.js";
import {
  chatCompletion,
  chatCompletionChunks,
  type OpenAIWireServer,
  startOpenAIWireServer,
  type WireCompletion,
} from "./testing/openai-wire-server.js";

let server: OpenAIWireServer;

beforeEach(async () => {
  server = await startOpenAIWireServer();
});

afterEach(async () => {
  await server.close();
});

const provider = (options: Parameters<typeof openaiProvider>[0] = {}) =>
  openaiProvider({ baseURL: server.baseURL, apiKey: "sk-test", model: "gpt-4o-mini", ...options });

const hello: ProviderRequest = { messages: [{ role: "user", content: "Hello" }] };

async function collect(stream: AsyncIterable<ProviderDelta>): Promise<ProviderDelta[]> {
  const out: ProviderDelta[] = [];
  for await (const delta of stream) out.push(delta);
  return out;
}

async function failure(
  stream: AsyncIterable<ProviderDelta>,
  seen: ProviderDelta[] = [],
): Promise<ProviderError> {
  try {
    for await (const delta of stream) seen.push(delta);
  } catch (error) {
    expect(ProviderError.isInstance(error)).toBe(true);
    return error as ProviderError;
  }
  throw new Error("the stream did not fail");
}

describe("stream", () => {
  it("asks for a stream with usage and sends the same body as complete otherwise", async () => {
    server.enqueue({ type: "stream", events: chatCompletionChunks({ content: ["hi"] }) });
    await collect(provider().stream!({ ...hello, temperature: 0.3 }));
    expect(server.requests[0]!.body).toEqual({
      model: "gpt-4o-mini",
      messages: hello.messages,
      temperature: 0.3,
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it("lets extra drop stream_options for servers that reject it, but never the stream flag", async () => {
    server.enqueue({ type: "stream", events: chatCompletionChunks({ content: ["hi"] }) });
    await collect(
      provider({ extra: { stream_options: undefined } }).stream!({ ...hello, extra: { stream: false } }),
    );
    expect(server.requests[0]!.body).not.toHaveProperty("stream_options");
    expect(server.requests[0]!.body.stream).toBe(true);
  });

  it("yields text deltas as they arrive and ends with one response carrying the usage", async () => {
    server.enqueue({
      type: "stream",
      events: chatCompletionChunks({
        content: ["Hel", "lo", " there"],
        usage: { prompt_tokens: 9, completion_tokens: 3, cached_tokens: 4, reasoning_tokens: 1 },
      }),
    });
    const deltas = await collect(provider().stream!(hello));
    expect(deltas).toEqual([
      { type: "text", text: "Hel" },
      { type: "text", text: "lo" },
      { type: "text", text: " there" },
      {
        type: "response",
        response: {
          content: "Hello there",
          toolCalls: [],
          finishReason: "stop",
          model: "gpt-4o-mini-2024-07-18",
          usage: {
            promptTokens: 9,
            completionTokens: 3,
            totalTokens: 12,
            cachedPromptTokens: 4,
            reasoningTokens: 1,
          },
        },
      },
    ]);
  });

  it("yields tool-call deltas with index, id, name and argument pieces split across many chunks", async () => {
    server.enqueue({
      type: "stream",
      events: chatCompletionChunks({
        toolCalls: [
          { id: "call_a", name: "weather", arguments: ['{"ci', 'ty": ', '"Os', 'lo"}'] },
          { id: "call_b", name: "time", arguments: ["{", '"tz":', '"UTC"', "}"] },
        ],
      }),
    });
    const deltas = await collect(provider().stream!(hello));
    expect(deltas.slice(0, -1)).toEqual([
      { type: "tool_call", index: 0, id: "call_a", name: "weather" },
      { type: "tool_call", index: 0, arguments: '{"ci' },
      { type: "tool_call", index: 0, arguments: 'ty": ' },
      { type: "tool_call", index: 0, arguments: '"Os' },
      { type: "tool_call", index: 0, arguments: 'lo"}' },
      { type: "tool_call", index: 1, id: "call_b", name: "time" },
      { type: "tool_call", index: 1, arguments: "{" },
      { type: "tool_call", index: 1, arguments: '"tz":' },
      { type: "tool_call", index: 1, arguments: '"UTC"' },
      { type: "tool_call", index: 1, arguments: "}" },
    ]);
    const last = deltas.at(-1)!;
    expect(last).toEqual({
      type: "response",
      response: {
        content: null,
        toolCalls: [
          { id: "call_a", type: "function", function: { name: "weather", arguments: '{"city": "Oslo"}' } },
          { id: "call_b", type: "function", function: { name: "time", arguments: '{"tz":"UTC"}' } },
        ],
        finishReason: "tool_calls",
        model: "gpt-4o-mini-2024-07-18",
        usage: {
          promptTokens: 10,
          completionTokens: 5,
          totalTokens: 15,
          cachedPromptTokens: 0,
          reasoningTokens: 0,
        },
      },
    });
  });

  it("folds interleaved tool-call pieces by index", async () => {
    const chunk = (toolCalls: unknown[], finish: string | null = null) => ({
      data: {
        id: "c",
        object: "chat.completion.chunk",
        created: 1,
        model: "m",
        choices: [{ index: 0, delta: { tool_calls: toolCalls }, finish_reason: finish }],
      },
    });
    server.enqueue({
      type: "stream",
      events: [
        chunk([{ index: 0, id: "a", type: "function", function: { name: "f", arguments: "" } }]),
        chunk([{ index: 1, id: "b", type: "function", function: { name: "g", arguments: "[" } }]),
        chunk([{ index: 0, function: { arguments: "{" } }]),
        chunk([{ index: 1, function: { arguments: "]" } }]),
        chunk([{ index: 0, function: { arguments: "}" } }], "tool_calls"),
      ],
    });
    const deltas = await collect(provider().stream!(hello));
    const response = deltas.at(-1)!;
    expect(response.type === "response" && response.response.toolCalls).toEqual([
      { id: "a", type: "function", function: { name: "f", arguments: "{}" } },
      { id: "b", type: "function", function: { name: "g", arguments: "[]" } },
    ]);
    expect(response.type === "response" && response.response).not.toHaveProperty("usage");
  });

  const rawChunk = (delta: Record<string, unknown>, finish: string | null = null, extra = {}) => ({
    data: {
      id: "c",
      object: "chat.completion.chunk",
      created: 1,
      model: "m",
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...extra,
    },
  });

  it("does not double a tool name that the server resends in every piece (vLLM, LiteLLM)", async () => {
    const piece = (args: string) => ({
      index: 0,
      id: "call_1",
      type: "function",
      function: { name: "get_weather", arguments: args },
    });
    server.enqueue({
      type: "stream",
      events: [
        rawChunk({ tool_calls: [piece("")] }),
        rawChunk({ tool_calls: [piece('{"city":')] }),
        rawChunk({ tool_calls: [piece('"Oslo"}')] }, "tool_calls"),
      ],
    });
    const deltas = await collect(provider().stream!(hello));
    const names = deltas.flatMap((d) => (d.type === "tool_call" && d.name ? [d.name] : []));
    const ids = deltas.flatMap((d) => (d.type === "tool_call" && d.id ? [d.id] : []));
    expect(names).toEqual(["get_weather"]);
    expect(ids).toEqual(["call_1"]);
    const last = deltas.at(-1)!;
    expect(last.type === "response" && last.response.toolCalls).toEqual([
      { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } },
    ]);
  });

  it("still joins a tool name that a server streams in fragments", async () => {
    server.enqueue({
      type: "stream",
      events: [
        rawChunk({ tool_calls: [{ index: 0, id: "c1", function: { name: "get_", arguments: "" } }] }),
        rawChunk(
          { tool_calls: [{ index: 0, function: { name: "weather", arguments: "{}" } }] },
          "tool_calls",
        ),
      ],
    });
    const deltas = await collect(provider().stream!(hello));
    const last = deltas.at(-1)!;
    expect(last.type === "response" && last.response.toolCalls[0]!.function.name).toBe("get_weather");
  });

  it("tells calls apart by id when a server leaves out the index", async () => {
    server.enqueue({
      type: "stream",
      events: [
        rawChunk({
          tool_calls: [{ id: "a", type: "function", function: { name: "f", arguments: '{"x":1}' } }],
        }),
        rawChunk({
          tool_calls: [{ id: "b", type: "function", function: { name: "g", arguments: '{"y":' } }],
        }),
        rawChunk({ tool_calls: [{ function: { arguments: "2}" } }] }, "tool_calls"),
      ],
    });
    const deltas = await collect(provider().stream!(hello));
    const last = deltas.at(-1)!;
    expect(last.type === "response" && last.response.toolCalls).toEqual([
      { id: "a", type: "function", function: { name: "f", arguments: '{"x":1}' } },
      { id: "b", type: "function", function: { name: "g", arguments: '{"y":2}' } },
    ]);
  });

  it("reports a stream that ends without usage (or with an empty one) as no usage, not zero", async () => {
    for (const extra of [{}, { usage: null }, { usage: {} }]) {
      server.enqueue({ type: "stream", events: [rawChunk({ content: "ok" }, "stop", extra)] });
      const deltas = await collect(provider().stream!(hello));
      const last = deltas.at(-1)!;
      expect(last.type === "response" && last.response).not.toHaveProperty("usage");
    }
  });

  it("takes usage from a finish chunk too, for servers that send it there", async () => {
    server.enqueue({
      type: "stream",
      events: [
        {
          data: {
            id: "c",
            object: "chat.completion.chunk",
            created: 1,
            model: "local",
            choices: [{ index: 0, delta: { content: "ok" }, finish_reason: "stop" }],
            usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 },
          },
        },
      ],
    });
    const deltas = await collect(provider().stream!(hello));
    expect(deltas.at(-1)).toEqual({
      type: "response",
      response: {
        content: "ok",
        toolCalls: [],
        finishReason: "stop",
        model: "local",
        usage: { promptTokens: 2, completionTokens: 1, totalTokens: 3 },
      },
    });
  });

  const scripts: [string, WireCompletion][] = [
    ["text", { content: ["One ", "two ", "three."], usage: { prompt_tokens: 5, completion_tokens: 3 } }],
    ["tool calls", { toolCalls: [{ id: "call_1", name: "sum", arguments: ['{"a":', "1,", '"b":2}'] }] }],
    [
      "text and tool calls",
      { content: ["Let me check."], toolCalls: [{ id: "call_9", name: "look", arguments: ["{}"] }] },
    ],
    ["a refusal", { refusal: "I can't help with that." }],
    ["a length stop", { content: ["cut"], finishReason: "length" }],
    ["a content filter", { finishReason: "content_filter" }],
    ["no usage", { content: ["x"], usage: null }],
  ];

  it.each(scripts)("ends with the response complete gives for %s", async (_, script) => {
    server.enqueue({ type: "json", body: chatCompletion(script) });
    server.enqueue({ type: "stream", events: chatCompletionChunks(script) });
    const completed = await provider().complete(hello);
    const deltas = await collect(provider().stream!(hello));
    expect(deltas.filter((d) => d.type === "response")).toEqual([{ type: "response", response: completed }]);
  });

  it("streams a refusal as text and ends with content_filter", async () => {
    server.enqueue({ type: "stream", events: chatCompletionChunks({ refusal: "No." }) });
    const deltas = await collect(provider().stream!(hello));
    expect(deltas[0]).toEqual({ type: "text", text: "No." });
    expect(deltas.at(-1)).toMatchObject({ response: { content: "No.", finishReason: "content_filter" } });
  });

  it("streams a legacy function_call as tool call 0", async () => {
    const base = { id: "c", object: "chat.completion.chunk", created: 1, model: "m" };
    server.enqueue({
      type: "stream",
      events: [
        {
          data: { ...base, choices: [{ index: 0, delta: { function_call: { name: "f", arguments: "" } } }] },
        },
        { data: { ...base, choices: [{ index: 0, delta: { function_call: { arguments: '{"x":1}' } } }] } },
        { data: { ...base, choices: [{ index: 0, delta: {}, finish_reason: "function_call" }] } },
      ],
    });
    const deltas = await collect(provider().stream!(hello));
    expect(deltas.at(-1)).toMatchObject({
      response: {
        finishReason: "tool_calls",
        toolCalls: [{ id: "function_call", type: "function", function: { name: "f", arguments: '{"x":1}' } }],
      },
    });
  });

  it("fails with provider_stream when the socket is destroyed mid-way, after the deltas it got", async () => {
    const events = chatCompletionChunks({ content: ["partial ", "answer", " never finished"] });
    server.enqueue({ type: "stream", events: events.slice(0, 3), cut: true });
    const seen: ProviderDelta[] = [];
    const error = await failure(provider().stream!(hello), seen);
    expect(seen).toEqual([
      { type: "text", text: "partial " },
      { type: "text", text: "answer" },
    ]);
    expect(error.code).toBe("provider_stream");
    expect(error.retryable).toBe(false);
    expect(error.cause).toBeDefined();
    expect(error.message).toMatch(/gpt-4o-mini.*cut/);
  });

  it("marks a stream cut before any delta as retryable, so streamProvider tries again", async () => {
    server.enqueue({
      type: "stream",
      events: chatCompletionChunks({ content: ["x"] }).slice(0, 1),
      cut: true,
    });
    server.enqueue({ type: "stream", events: chatCompletionChunks({ content: ["second try"] }) });
    const deltas = await collect(streamProvider(provider(), hello, { retry: { baseDelayMs: 1 } }));
    expect(deltas.at(-1)).toMatchObject({ response: { content: "second try" } });
    expect(server.requests).toHaveLength(2);
  });

  it("fails with provider_stream when a stream ends cleanly but without finishing", async () => {
    const events = chatCompletionChunks({ content: ["half"] });
    server.enqueue({ type: "stream", events: events.slice(0, 2), done: false });
    const error = await failure(provider().stream!(hello));
    expect(error.code).toBe("provider_stream");
    expect(error.message).toMatch(/ended before the model finished/);
  });

  it("fails with provider_stream on malformed JSON in a data: line", async () => {
    server.enqueue({
      type: "stream",
      events: [
        ...chatCompletionChunks({ content: ["ok"] }).slice(0, 2),
        { raw: 'data: {"id": "chatcmpl-1", "choi\n\n' },
      ],
    });
    const seen: ProviderDelta[] = [];
    const error = await failure(provider().stream!(hello), seen);
    expect(seen).toEqual([{ type: "text", text: "ok" }]);
    expect(error.code).toBe("provider_stream");
    expect(error.retryable).toBe(false);
    expect(error.cause).toBeInstanceOf(SyntaxError);
    expect(error.message).toMatch(/not JSON/);
  });

  it("maps an error event inside the stream by its type", async () => {
    server.enqueue({
      type: "stream",
      events: [
        {
          data: {
            error: {
              message: "The server had an error while processing your request.",
              type: "server_error",
              param: null,
              code: null,
            },
          },
        },
      ],
    });
    const error = await failure(provider().stream!(hello));
    expect(error.code).toBe("provider_unavailable");
    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(/The server had an error/);
  });

  it("marks an error event after streamed text as not retryable, whatever its type", async () => {
    for (const type of ["server_error", "rate_limit_exceeded"]) {
      server.enqueue({
        type: "stream",
        events: [
          ...chatCompletionChunks({ content: ["Partial"] }).slice(0, 2),
          { data: { error: { message: "Overloaded.", type, param: null, code: null } } },
        ],
      });
      const seen: ProviderDelta[] = [];
      const error = await failure(provider().stream!(hello), seen);
      expect(seen).toEqual([{ type: "text", text: "Partial" }]);
      expect(error.retryable).toBe(false);
      expect(error.message).toMatch(/already streamed/);
    }
  });

  it.each([
    ["rate_limit_exceeded", "provider_rate_limited", true],
    ["invalid_request_error", "provider_bad_request", false],
    ["mystery_error", "provider_stream", true],
  ] as const)("maps an error event of type %s to %s", async (type, code, retryable) => {
    server.enqueue({
      type: "stream",
      events: [{ data: { error: { message: "Something went wrong.", type, param: null, code: null } } }],
    });
    const error = await failure(provider().stream!(hello));
    expect(error).toMatchObject({ code, retryable, status: undefined });
    expect(error.message).toMatch(/Something went wrong/);
  });

  it("maps HTTP errors before the stream opens like complete does", async () => {
    server.enqueue({
      type: "error",
      status: 429,
      message: "Rate limit reached",
      errorType: "requests",
      code: "rate_limit_exceeded",
      headers: { "retry-after-ms": "75" },
    });
    const error = await failure(provider().stream!(hello));
    expect(error.code).toBe("provider_rate_limited");
    expect(error.status).toBe(429);
    expect(error.retryAfterMs).toBe(75);
  });

  it("rejects with aborted when the signal fires mid-stream, and the server sees the connection close", async () => {
    const events = chatCompletionChunks({ content: ["first", "second"] });
    server.enqueue({ type: "stream", events: events.slice(0, 2), hang: true });
    const controller = new AbortController();
    const seen: ProviderDelta[] = [];
    let caught: unknown;
    try {
      for await (const delta of provider().stream!(hello, { signal: controller.signal })) {
        seen.push(delta);
        controller.abort(new Error("user pressed stop"));
      }
    } catch (error) {
      caught = error;
    }
    expect(seen).toEqual([{ type: "text", text: "first" }]);
    expect(ProviderError.isInstance(caught, "aborted")).toBe(true);
    expect((caught as ProviderError).retryable).toBe(false);
    expect((caught as ProviderError).cause).toEqual(new Error("user pressed stop"));
    expect(await server.requests[0]!.closedEarly).toBe(true);
  });

  it("rejects with aborted when the signal fires while waiting for the stream to open", async () => {
    server.enqueue({ type: "hang" });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await failure(provider().stream!(hello, { signal: controller.signal }));
    expect(error.code).toBe("aborted");
    expect(await server.requests[0]!.closedEarly).toBe(true);
  });

  it("rejects at once with aborted, sending nothing, when the signal has already fired", async () => {
    const error = await failure(provider().stream!(hello, { signal: AbortSignal.abort() }));
    expect(error.code).toBe("aborted");
    expect(server.requests).toHaveLength(0);
  });

  it("closes the connection when the consumer stops reading early", async () => {
    const events = chatCompletionChunks({ content: ["a", "b"] });
    server.enqueue({ type: "stream", events: events.slice(0, 2), hang: true });
    for await (const _ of provider().stream!(hello)) break;
    expect(await server.requests[0]!.closedEarly).toBe(true);
  });

  it("fails with provider_timeout when the server goes quiet mid-stream for timeoutMs", async () => {
    const events = chatCompletionChunks({ content: ["a", "b"] });
    server.enqueue({ type: "stream", events: events.slice(0, 2), hang: true });
    const seen: ProviderDelta[] = [];
    const error = await failure(provider({ timeoutMs: 150 }).stream!(hello), seen);
    expect(seen).toEqual([{ type: "text", text: "a" }]);
    expect(error.code).toBe("provider_timeout");
    expect(error.message).toMatch(/150 ms/);
    expect(await server.requests[0]!.closedEarly).toBe(true);
  });

  it("does not time out a slow stream whose events keep coming", async () => {
    server.enqueue({
      type: "stream",
      events: chatCompletionChunks({ content: ["a", "b", "c", "d"] }),
      delayMs: 60,
    });
    const deltas = await collect(provider({ timeoutMs: 150 }).stream!(hello));
    expect(deltas.at(-1)).toMatchObject({ response: { content: "abcd" } });
  });

  it("does not count the consumer's time against timeoutMs", async () => {
    server.enqueue({ type: "stream", events: chatCompletionChunks({ content: ["a", "b"] }) });
    const deltas: ProviderDelta[] = [];
    for await (const delta of provider({ timeoutMs: 100 }).stream!(hello)) {
      deltas.push(delta);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(deltas.at(-1)).toMatchObject({ response: { content: "ab" } });
  });
});
