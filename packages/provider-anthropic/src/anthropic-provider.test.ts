import Anthropic from "@anthropic-ai/sdk";
import {
  type Message,
  OpenRathError,
  type ProviderDelta,
  ProviderError,
  type ProviderRequest,
  type ProviderV1,
  type ToolSpec,
} from "@openrath/core";
import { callProvider, DeltaAccumulator, streamProvider } from "@openrath/core/backend";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { anthropicProvider } from "./index.js";
import {
  type AnthropicWireServer,
  messageReply,
  startAnthropicWireServer,
  streamEvents,
  streamReply,
  type WireMessage,
} from "./testing/anthropic-wire-server.js";

let server: AnthropicWireServer;

beforeEach(async () => {
  server = await startAnthropicWireServer();
  vi.stubEnv("ANTHROPIC_API_KEY", "");
  vi.stubEnv("ANTHROPIC_BASE_URL", "");
  vi.stubEnv("ANTHROPIC_MODEL", "");
  vi.stubEnv("ANTHROPIC_AUTH_TOKEN", "");
  vi.stubEnv("ANTHROPIC_CUSTOM_HEADERS", "");
});

afterEach(async () => {
  vi.unstubAllEnvs();
  await server.close();
});

const provider = (options: Parameters<typeof anthropicProvider>[0] = {}): ProviderV1 =>
  anthropicProvider({ apiKey: "test-key", baseURL: server.url, model: "claude-test-1", ...options });

const hello: ProviderRequest = { messages: [{ role: "user", content: "Hello" }] };

async function collect(stream: AsyncIterable<ProviderDelta>): Promise<ProviderDelta[]> {
  const out: ProviderDelta[] = [];
  for await (const delta of stream) out.push(delta);
  return out;
}

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  try {
    await promise;
  } catch (error) {
    expect(ProviderError.isInstance(error)).toBe(true);
    return error as ProviderError;
  }
  throw new Error("expected the call to fail");
}

const weatherTool: ToolSpec = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Weather for a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

const toolTurn: WireMessage = {
  content: [
    { type: "text", text: "Let me check both." },
    { type: "tool_use", id: "toolu_01", name: "get_weather", input: { city: "Paris", days: [1, 2] } },
    { type: "tool_use", id: "toolu_02", name: "get_time", input: {} },
  ],
  stop_reason: "tool_use",
  usage: { input_tokens: 30, output_tokens: 12 },
};

describe("anthropicProvider construction", () => {
  it("throws invalid_argument when no model is given or set in ANTHROPIC_MODEL", () => {
    expect(() => anthropicProvider({ apiKey: "k" })).toThrowError(/ANTHROPIC_MODEL/);
    try {
      anthropicProvider({ apiKey: "k" });
    } catch (error) {
      expect(OpenRathError.isInstance(error, "invalid_argument")).toBe(true);
    }
  });

  it("rejects out-of-range options with invalid_argument", () => {
    for (const bad of [{ maxTokens: 0 }, { maxTokens: 1.5 }, { timeoutMs: -1 }]) {
      expect(() => anthropicProvider({ model: "m", ...bad })).toThrow(
        expect.objectContaining({ code: "invalid_argument" }),
      );
    }
  });

  it("refuses an unknown option naming the known ones, and never shows the key", () => {
    let error: unknown;
    try {
      anthropicProvider({ model: "m", apiKey: ["sk-ant-secret"], max_tokens: 10 } as never);
    } catch (e) {
      error = e;
    }
    expect(OpenRathError.isInstance(error, "invalid_argument")).toBe(true);
    expect((error as Error).message).toContain(
      '"max_tokens" is 10; it is not an option of anthropicProvider(); the fields are apiKey, baseURL, model, maxTokens,',
    );
    expect(`${(error as Error).message}${JSON.stringify((error as OpenRathError).details)}`).not.toContain(
      "sk-ant-secret",
    );
  });

  it("reads the key, base URL and model from the environment", async () => {
    vi.stubEnv("ANTHROPIC_API_KEY", "env-key");
    vi.stubEnv("ANTHROPIC_BASE_URL", server.url);
    vi.stubEnv("ANTHROPIC_MODEL", "claude-env");
    const p = anthropicProvider();
    expect(p).toMatchObject({ specVersion: "v1", name: "anthropic", model: "claude-env" });
    server.enqueue(messageReply({ content: [{ type: "text", text: "hi" }] }));
    await p.complete(hello);
    const [request] = server.requests;
    expect(request?.path).toBe("/v1/messages");
    expect(request?.body.model).toBe("claude-env");
    expect(JSON.stringify(request?.headers)).toContain("env-key");
    expect(request?.headers["anthropic-version"]).toBeTruthy();
  });

  it("prefers options over the environment and sends extra headers", async () => {
    vi.stubEnv("ANTHROPIC_MODEL", "claude-env");
    const p = provider({ model: "claude-option", headers: { "anthropic-beta": "test-beta" } });
    expect(p.model).toBe("claude-option");
    server.enqueue(messageReply({ content: [{ type: "text", text: "hi" }] }));
    await p.complete(hello);
    expect(server.requests[0]?.body.model).toBe("claude-option");
    expect(server.requests[0]?.headers["anthropic-beta"]).toBe("test-beta");
  });
});

describe("request → wire", () => {
  it("maps the whole transcript: system, text, tool calls, tool results, merged turns", async () => {
    const messages: Message[] = [
      { role: "system", content: "You are terse." },
      { role: "user", content: "Weather in Paris and the time?" },
      { role: "user", content: "Quickly." },
      {
        role: "assistant",
        content: "Checking.",
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Paris"}' },
          },
          { id: "call_2", type: "function", function: { name: "get_time", arguments: "" } },
          { id: "call_3", type: "function", function: { name: "get_weather", arguments: '{"city": "Par' } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: '{"temp":21}' },
      {
        role: "tool",
        tool_call_id: "call_2",
        content: '{"ok":false,"error_kind":"tool_execution_exception"}',
      },
      { role: "tool", tool_call_id: "call_3", content: '{"ok":false,"error_kind":"invalid_tool_arguments"}' },
      { role: "system", content: "Answer in one line." },
      { role: "assistant", content: "Sunny, 21°C." },
      { role: "user", content: "Thanks" },
    ];
    server.enqueue(messageReply({ content: [{ type: "text", text: "ok" }] }));
    await provider().complete({ messages });
    const body = server.requests[0]?.body;
    expect(body.system).toBe("You are terse.\n\nAnswer in one line.");
    expect(body.max_tokens).toBe(4096);
    expect(body.model).toBe("claude-test-1");
    expect(body.stream).toBeUndefined();
    expect(body.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "Weather in Paris and the time?" },
          { type: "text", text: "Quickly." },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Checking." },
          { type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Paris" } },
          { type: "tool_use", id: "call_2", name: "get_time", input: {} },
          { type: "tool_use", id: "call_3", name: "get_weather", input: { _raw: '{"city": "Par' } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "call_1", content: '{"temp":21}' },
          {
            type: "tool_result",
            tool_use_id: "call_2",
            content: '{"ok":false,"error_kind":"tool_execution_exception"}',
            is_error: true,
          },
          {
            type: "tool_result",
            tool_use_id: "call_3",
            content: '{"ok":false,"error_kind":"invalid_tool_arguments"}',
            is_error: true,
          },
        ],
      },
      { role: "assistant", content: "Sunny, 21°C." },
      { role: "user", content: "Thanks" },
    ]);
  });

  it("maps tools and every tool choice", async () => {
    const cases: [ProviderRequest["toolChoice"], unknown][] = [
      [undefined, undefined],
      ["auto", { type: "auto" }],
      ["none", { type: "none" }],
      ["required", { type: "any" }],
      [{ name: "get_weather" }, { type: "tool", name: "get_weather" }],
    ];
    const p = provider();
    for (const [toolChoice] of cases) {
      server.enqueue(messageReply({ content: [{ type: "text", text: "ok" }] }));
      await p.complete({ ...hello, tools: [weatherTool], ...(toolChoice ? { toolChoice } : {}) });
    }
    cases.forEach(([, expected], i) => {
      const body = server.requests[i]?.body;
      expect(body.tools).toEqual([
        {
          name: "get_weather",
          description: "Weather for a city",
          input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
        },
      ]);
      expect(body.tool_choice).toEqual(expected);
    });
  });

  it("turns parallelToolCalls: false into disable_parallel_tool_use and sends no tool_choice without tools", async () => {
    const p = provider();
    server.enqueue(
      messageReply({ content: [{ type: "text", text: "ok" }] }),
      messageReply({ content: [{ type: "text", text: "ok" }] }),
      messageReply({ content: [{ type: "text", text: "ok" }] }),
    );
    await p.complete({ ...hello, tools: [weatherTool], parallelToolCalls: false });
    await p.complete({ ...hello, tools: [weatherTool], toolChoice: "required", parallelToolCalls: false });
    await p.complete({ ...hello, toolChoice: "required", parallelToolCalls: false });
    expect(server.requests[0]?.body.tool_choice).toEqual({ type: "auto", disable_parallel_tool_use: true });
    expect(server.requests[1]?.body.tool_choice).toEqual({ type: "any", disable_parallel_tool_use: true });
    expect(server.requests[2]?.body).not.toHaveProperty("tool_choice");
    expect(server.requests[2]?.body).not.toHaveProperty("tools");
  });

  it("sends sampling options, request overrides of the defaults, and extra fields last", async () => {
    const p = provider({ maxTokens: 1000, temperature: 0.1, topP: 0.5, stop: ["END"], extra: { top_k: 5 } });
    server.enqueue(
      messageReply({ content: [{ type: "text", text: "ok" }] }),
      messageReply({ content: [{ type: "text", text: "ok" }] }),
    );
    await p.complete(hello);
    await p.complete({
      ...hello,
      model: "claude-other",
      maxTokens: 50,
      temperature: 0.9,
      topP: 0.8,
      stop: ["STOP", "HALT"],
      seed: 7,
      extra: { metadata: { user_id: "u-1" }, top_k: 9 },
    });
    expect(server.requests[0]?.body).toMatchObject({
      max_tokens: 1000,
      temperature: 0.1,
      top_p: 0.5,
      stop_sequences: ["END"],
      top_k: 5,
    });
    const second = server.requests[1]?.body;
    expect(second).toMatchObject({
      model: "claude-other",
      max_tokens: 50,
      temperature: 0.9,
      top_p: 0.8,
      stop_sequences: ["STOP", "HALT"],
      metadata: { user_id: "u-1" },
      top_k: 9,
    });
    expect(second).not.toHaveProperty("seed");
  });
});

describe("wire → response", () => {
  it("maps a text reply with usage, counting cached input into promptTokens", async () => {
    server.enqueue(
      messageReply({
        model: "claude-test-1-20260101",
        content: [
          { type: "text", text: "Hello " },
          { type: "text", text: "there." },
        ],
        usage: {
          input_tokens: 100,
          cache_read_input_tokens: 40,
          cache_creation_input_tokens: 10,
          output_tokens: 7,
        },
      }),
    );
    const response = await provider().complete(hello);
    expect(response).toEqual({
      content: "Hello there.",
      toolCalls: [],
      finishReason: "stop",
      model: "claude-test-1-20260101",
      usage: { promptTokens: 150, completionTokens: 7, totalTokens: 157, cachedPromptTokens: 40 },
    });
  });

  it("maps tool_use blocks to tool calls with JSON-stringified input", async () => {
    server.enqueue(messageReply(toolTurn));
    const response = await provider().complete({ ...hello, tools: [weatherTool] });
    expect(response.content).toBe("Let me check both.");
    expect(response.finishReason).toBe("tool_calls");
    expect(response.toolCalls).toEqual([
      {
        id: "toolu_01",
        type: "function",
        function: { name: "get_weather", arguments: '{"city":"Paris","days":[1,2]}' },
      },
      { id: "toolu_02", type: "function", function: { name: "get_time", arguments: "{}" } },
    ]);
  });

  it("gives null content when the reply only calls tools, and keeps thinking out of the text", async () => {
    server.enqueue(
      messageReply({
        content: [
          { type: "thinking", thinking: "The user wants weather.", signature: "sig" },
          { type: "tool_use", id: "toolu_9", name: "get_weather", input: { city: "Oslo" } },
        ],
        stop_reason: "tool_use",
        usage: { input_tokens: 5, output_tokens: 20, output_tokens_details: { thinking_tokens: 12 } },
      }),
    );
    const response = await provider().complete(hello);
    expect(response.content).toBeNull();
    expect(response.toolCalls).toHaveLength(1);
    expect(response.usage).toMatchObject({ completionTokens: 20, reasoningTokens: 12 });
  });

  it("maps every stop reason", async () => {
    const reasons: [string | null, string][] = [
      ["end_turn", "stop"],
      ["stop_sequence", "stop"],
      ["max_tokens", "length"],
      ["model_context_window_exceeded", "length"],
      ["tool_use", "tool_calls"],
      ["refusal", "content_filter"],
      ["pause_turn", "length"],
      ["something_new", "stop"],
      [null, "stop"],
    ];
    // Without continuations, a paused turn ends as it is: unfinished.
    const p = provider({ maxPauseContinuations: 0 });
    for (const [stop_reason, expected] of reasons) {
      server.enqueue(messageReply({ content: [{ type: "text", text: "x" }], stop_reason }));
      expect((await p.complete(hello)).finishReason).toBe(expected);
    }
  });
});

describe("structured output", () => {
  const schema = {
    type: "object",
    properties: { name: { type: "string" }, age: { type: "integer" } },
    required: ["name", "age"],
  } as const;
  const answer: WireMessage = {
    content: [{ type: "tool_use", id: "toolu_s", name: "person", input: { name: "Ada", age: 36 } }],
    stop_reason: "tool_use",
  };

  it("forces a tool named after the schema and returns its input as the text content", async () => {
    server.enqueue(messageReply(answer));
    const response = await provider().complete({
      ...hello,
      responseFormat: { type: "json_schema", name: "person", schema, strict: true },
    });
    expect(server.requests[0]?.body.tools).toEqual([
      { name: "person", description: expect.any(String), input_schema: schema, strict: true },
    ]);
    expect(server.requests[0]?.body.tool_choice).toEqual({ type: "tool", name: "person" });
    expect(response).toMatchObject({
      content: '{"name":"Ada","age":36}',
      toolCalls: [],
      finishReason: "stop",
    });
    expect(JSON.parse(response.content ?? "")).toEqual({ name: "Ada", age: 36 });
  });

  it("streams the answer as text and ends with the same response as complete", async () => {
    const request: ProviderRequest = {
      ...hello,
      responseFormat: { type: "json_schema", name: "person", schema },
    };
    server.enqueue(messageReply(answer), streamReply(answer));
    const p = provider();
    const complete = await p.complete(request);
    const deltas = await collect(p.stream!(request));
    expect(deltas.filter((d) => d.type === "tool_call")).toEqual([]);
    const text = deltas.map((d) => (d.type === "text" ? d.text : "")).join("");
    expect(JSON.parse(text)).toEqual({ name: "Ada", age: 36 });
    expect(deltas.at(-1)).toEqual({ type: "response", response: complete });
  });

  it("keeps the request's tools callable: tool_choice any, and real tool calls come back as calls", async () => {
    server.enqueue(
      messageReply({
        content: [{ type: "tool_use", id: "toolu_w", name: "get_weather", input: { city: "Rome" } }],
        stop_reason: "tool_use",
      }),
    );
    const response = await provider().complete({
      ...hello,
      tools: [weatherTool],
      responseFormat: { type: "json_schema", name: "person", schema },
    });
    const body = server.requests[0]?.body;
    expect(body.tools.map((t: { name: string }) => t.name)).toEqual(["get_weather", "person"]);
    expect(body.tool_choice).toEqual({ type: "any" });
    expect(response.finishReason).toBe("tool_calls");
    expect(response.toolCalls[0]?.function.name).toBe("get_weather");
  });

  it("uses a json_object tool for json_object, and output_config when structuredOutput is native", async () => {
    server.enqueue(
      messageReply({
        content: [{ type: "tool_use", id: "t", name: "json_object", input: { a: 1 } }],
        stop_reason: "tool_use",
      }),
      messageReply({ content: [{ type: "text", text: '{"name":"Ada","age":36}' }] }),
    );
    const first = await provider().complete({ ...hello, responseFormat: { type: "json_object" } });
    expect(first.content).toBe('{"a":1}');
    expect(server.requests[0]?.body.tool_choice).toEqual({ type: "tool", name: "json_object" });
    const second = await provider({ structuredOutput: "native" }).complete({
      ...hello,
      responseFormat: { type: "json_schema", name: "person", schema },
    });
    expect(second.content).toBe('{"name":"Ada","age":36}');
    expect(server.requests[1]?.body.output_config).toEqual({ format: { type: "json_schema", schema } });
    expect(server.requests[1]?.body).not.toHaveProperty("tools");
  });

  it("rejects a schema named like one of the request's tools with provider_bad_request", async () => {
    const error = await failure(
      provider().complete({
        ...hello,
        tools: [weatherTool],
        responseFormat: { type: "json_schema", name: "get_weather", schema },
      }),
    );
    expect(error.code).toBe("provider_bad_request");
    expect(error.retryable).toBe(false);
    expect(server.requests).toHaveLength(0);
  });
});

describe("streaming", () => {
  it("yields text deltas as they arrive and ends with the response complete gives", async () => {
    const message: WireMessage = {
      content: [{ type: "text", text: "The quick brown fox jumps." }],
      usage: { input_tokens: 12, cache_read_input_tokens: 3, output_tokens: 9 },
    };
    server.enqueue(messageReply(message), streamReply(message, { textChunk: 5 }, { splitWrites: true }));
    const p = provider();
    const complete = await p.complete(hello);
    const deltas = await collect(p.stream!(hello));
    const texts = deltas.filter((d) => d.type === "text").map((d) => (d.type === "text" ? d.text : ""));
    expect(texts).toEqual(["The q", "uick ", "brown", " fox ", "jumps", "."]);
    expect(deltas.filter((d) => d.type === "response")).toHaveLength(1);
    expect(deltas.at(-1)).toEqual({ type: "response", response: complete });
    expect(complete.usage).toEqual({
      promptTokens: 15,
      completionTokens: 9,
      totalTokens: 24,
      cachedPromptTokens: 3,
    });
    expect(server.requests[1]?.body.stream).toBe(true);
  });

  it("yields tool-call deltas under each call's own index, split across events", async () => {
    server.enqueue(messageReply(toolTurn), streamReply(toolTurn, { jsonChunk: 4 }));
    const p = provider();
    const complete = await p.complete(hello);
    const deltas = await collect(p.stream!(hello));
    const calls = deltas.filter((d) => d.type === "tool_call");
    expect(calls[0]).toEqual({ type: "tool_call", index: 0, id: "toolu_01", name: "get_weather" });
    expect(calls.filter((d) => d.index === 0 && d.arguments !== undefined).length).toBeGreaterThan(3);
    expect(calls).toContainEqual({ type: "tool_call", index: 1, id: "toolu_02", name: "get_time" });
    expect(calls.some((d) => d.index === 1 && d.arguments !== undefined)).toBe(false);

    const final = deltas.at(-1);
    expect(final).toEqual({ type: "response", response: complete });

    // Folding the deltas gives the same calls; the arguments are the server's formatting of the same JSON.
    const fold = new DeltaAccumulator();
    for (const d of deltas) fold.add(d);
    const folded = fold.response({ model: complete.model });
    expect(folded.content).toBe(complete.content);
    expect(folded.toolCalls.map((c) => [c.id, c.function.name])).toEqual([
      ["toolu_01", "get_weather"],
      ["toolu_02", "get_time"],
    ]);
    expect(JSON.parse(folded.toolCalls[0]?.function.arguments ?? "")).toEqual({
      city: "Paris",
      days: [1, 2],
    });
    expect(folded.toolCalls[0]?.function.arguments).toBe('{"city": "Paris", "days": [1, 2]}');
  });

  it("turns an error event after streamed text into a provider_unavailable that is not retried", async () => {
    const events = streamEvents({ content: [{ type: "text", text: "Partial answer" }] }).slice(0, 4);
    events.push({
      event: "error",
      data: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
    });
    server.enqueue({ type: "stream", events });
    const seen: ProviderDelta[] = [];
    const error = await failure(
      (async () => {
        for await (const d of provider().stream!(hello)) seen.push(d);
      })(),
    );
    expect(seen).toEqual([{ type: "text", text: "Part" }]);
    expect(error.code).toBe("provider_unavailable");
    // Retrying would repeat "Part", which the caller already has.
    expect(error.retryable).toBe(false);
    expect(error.message).toContain("already streamed");
    expect(error.status).toBe(529);
    expect(error.message).toContain("claude-test-1");
    expect(error.message).toContain("Overloaded");
  });

  it("reports a connection cut after streamed text as provider_stream, not retryable", async () => {
    server.enqueue(
      streamReply({ content: [{ type: "text", text: "Hello there, friend" }] }, {}, { cutAfter: 4 }),
    );
    const error = await failure(collect(provider().stream!(hello)));
    expect(error.code).toBe("provider_stream");
    expect(error.retryable).toBe(false);
    expect(error.cause).toBeDefined();
  });

  it("reports a connection cut before any delta as a retryable provider_stream", async () => {
    server.enqueue(
      streamReply({ content: [{ type: "text", text: "Hello there, friend" }] }, {}, { cutAfter: 2 }),
    );
    const error = await failure(collect(provider().stream!(hello)));
    expect(error.code).toBe("provider_stream");
    expect(error.retryable).toBe(true);
  });

  it("reports a stream that ends cleanly before message_stop as provider_stream", async () => {
    const message: WireMessage = { content: [{ type: "text", text: "Hello" }] };
    server.enqueue(streamReply(message, {}, { endAfter: streamEvents(message).length - 1 }));
    const error = await failure(collect(provider().stream!(hello)));
    expect(error.code).toBe("provider_stream");
    expect(error.message).toContain("message_stop");
  });

  it("reports malformed event data as a non-retryable provider_stream", async () => {
    const events = streamEvents({ content: [{ type: "text", text: "Hello" }] });
    events.splice(3, 0, {
      raw: 'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0,\n\n',
    });
    server.enqueue({ type: "stream", events });
    const client = new Anthropic({ apiKey: "k", baseURL: server.url, logLevel: "off" });
    const error = await failure(collect(provider({ client }).stream!(hello)));
    expect(error.code).toBe("provider_stream");
    expect(error.retryable).toBe(false);
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it("ignores ping events and unknown block types", async () => {
    const events = streamEvents({
      content: [
        { type: "thinking", thinking: "", signature: "" },
        { type: "text", text: "Done" },
      ],
    });
    events.splice(3, 0, { event: "ping", data: { type: "ping" } });
    server.enqueue({ type: "stream", events });
    const deltas = await collect(provider().stream!(hello));
    expect(deltas).toEqual([
      { type: "text", text: "Done" },
      {
        type: "response",
        response: expect.objectContaining({ content: "Done", toolCalls: [], finishReason: "stop" }),
      },
    ]);
  });

  it("rejects with aborted when the signal fires mid-stream, and the server sees the connection close", async () => {
    server.enqueue(
      streamReply(
        { content: [{ type: "text", text: "A long answer that never ends" }] },
        {},
        { holdAfter: 4 },
      ),
    );
    const controller = new AbortController();
    const seen: ProviderDelta[] = [];
    const error = await failure(
      (async () => {
        for await (const d of provider().stream!(hello, { signal: controller.signal })) {
          seen.push(d);
          controller.abort(new Error("user pressed stop"));
        }
      })(),
    );
    expect(seen).toHaveLength(1);
    expect(error.code).toBe("aborted");
    expect(error.retryable).toBe(false);
    await server.clientClosed(0);
    expect(server.requests[0]?.closedEarly).toBe(true);
  });

  it("rejects with aborted without calling the server when the signal has already fired", async () => {
    const controller = new AbortController();
    controller.abort();
    const p = provider();
    expect((await failure(p.complete(hello, { signal: controller.signal }))).code).toBe("aborted");
    expect((await failure(collect(p.stream!(hello, { signal: controller.signal })))).code).toBe("aborted");
    expect(server.requests).toHaveLength(0);
  });

  it("aborts a complete() call that is waiting for its response", async () => {
    server.enqueue({ ...messageReply({ content: [{ type: "text", text: "late" }] }), delayMs: 2_000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await failure(provider().complete(hello, { signal: controller.signal }));
    expect(error.code).toBe("aborted");
    await server.clientClosed(0);
    expect(server.requests[0]?.closedEarly).toBe(true);
  });
});

describe("errors", () => {
  it("maps 429 to provider_rate_limited with retry-after in milliseconds", async () => {
    server.enqueue({
      type: "error",
      status: 429,
      errorType: "rate_limit_error",
      message: "Number of request tokens has exceeded your per-minute rate limit",
      headers: { "retry-after": "0.05" },
    });
    const error = await failure(provider().complete(hello));
    expect(error).toMatchObject({
      code: "provider_rate_limited",
      status: 429,
      retryAfterMs: 50,
      retryable: true,
    });
    expect(error.message).toContain("claude-test-1");
    expect(error.message).toContain("per-minute rate limit");
    expect(error.cause).toBeInstanceOf(Anthropic.RateLimitError);
  });

  it("reads retry-after-ms too", async () => {
    server.enqueue({
      type: "error",
      status: 429,
      errorType: "rate_limit_error",
      message: "slow down",
      headers: { "retry-after-ms": "120", "retry-after": "9" },
    });
    expect((await failure(provider().complete(hello))).retryAfterMs).toBe(120);
  });

  it("maps 529 overloaded and 500 to retryable provider_unavailable", async () => {
    server.enqueue(
      { type: "error", status: 529, errorType: "overloaded_error", message: "Overloaded" },
      { type: "error", status: 500, errorType: "api_error", message: "Internal server error" },
    );
    const p = provider();
    const overloaded = await failure(p.complete(hello));
    expect(overloaded).toMatchObject({ code: "provider_unavailable", status: 529, retryable: true });
    expect(overloaded.message).toContain("overloaded_error");
    const internal = await failure(p.complete(hello));
    expect(internal).toMatchObject({ code: "provider_unavailable", status: 500, retryable: true });
    expect(server.requests).toHaveLength(2);
  });

  it("maps 401 and 403 to provider_auth", async () => {
    server.enqueue(
      { type: "error", status: 401, errorType: "authentication_error", message: "invalid x-api-key" },
      { type: "error", status: 403, errorType: "permission_error", message: "no access to this model" },
    );
    const p = provider();
    const unauthorized = await failure(p.complete(hello));
    expect(unauthorized).toMatchObject({ code: "provider_auth", status: 401, retryable: false });
    expect(unauthorized.message).toContain("ANTHROPIC_API_KEY");
    expect(await failure(p.complete(hello))).toMatchObject({ code: "provider_auth", status: 403 });
  });

  it("maps other 4xx to provider_bad_request with the server's message", async () => {
    server.enqueue({
      type: "error",
      status: 400,
      errorType: "invalid_request_error",
      message: "messages.1.content: tool_use ids must be unique",
    });
    const error = await failure(provider().complete(hello));
    expect(error).toMatchObject({ code: "provider_bad_request", status: 400, retryable: false });
    expect(error.message).toContain("tool_use ids must be unique");
    expect(error.details).toMatchObject({ type: "invalid_request_error" });
  });

  it("maps an error status on a stream request before any event", async () => {
    server.enqueue({
      type: "error",
      status: 429,
      errorType: "rate_limit_error",
      message: "slow down",
      headers: { "retry-after": "1" },
    });
    const error = await failure(collect(provider().stream!(hello)));
    expect(error).toMatchObject({ code: "provider_rate_limited", retryAfterMs: 1000 });
  });

  it("maps a refused connection to provider_connection", async () => {
    const url = server.url;
    await server.close();
    const error = await failure(anthropicProvider({ apiKey: "k", baseURL: url, model: "m" }).complete(hello));
    expect(error.code).toBe("provider_connection");
    expect(error.retryable).toBe(true);
    expect(error.message).toContain(url);
    server = await startAnthropicWireServer();
  });

  it("maps a response that takes longer than timeoutMs to provider_timeout", async () => {
    server.enqueue({ ...messageReply({ content: [{ type: "text", text: "late" }] }), delayMs: 1_000 });
    const error = await failure(provider({ timeoutMs: 50 }).complete(hello));
    expect(error.code).toBe("provider_timeout");
    expect(error.retryable).toBe(true);
    expect(error.message).toContain("50 ms");
  });

  it("maps a body that is not JSON, or not a message, to provider_response", async () => {
    server.enqueue(
      {
        type: "raw",
        status: 200,
        headers: { "content-type": "application/json" },
        body: '{"type": "message", ',
      },
      { type: "json", body: { hello: "world" } },
      { type: "raw", status: 200, headers: { "content-type": "text/html" }, body: "<html>proxy</html>" },
    );
    const p = provider();
    for (let i = 0; i < 3; i++) {
      const error = await failure(p.complete(hello));
      expect(error.code).toBe("provider_response");
      expect(error.retryable).toBe(false);
    }
  });
});

describe("retries through core", () => {
  it("callProvider: 429 then 200 gives one response after the server's retry-after", async () => {
    server.enqueue(
      {
        type: "error",
        status: 429,
        errorType: "rate_limit_error",
        message: "slow down",
        headers: { "retry-after": "0.05" },
      },
      messageReply({ content: [{ type: "text", text: "finally" }] }),
    );
    const delays: number[] = [];
    const started = Date.now();
    const response = await callProvider(provider(), hello, {
      retry: { onRetry: ({ delayMs }) => delays.push(delayMs) },
    });
    expect(response.content).toBe("finally");
    expect(server.requests).toHaveLength(2);
    expect(delays).toEqual([50]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });

  it("streamProvider: 529 before the first event, then a stream", async () => {
    server.enqueue(
      {
        type: "error",
        status: 529,
        errorType: "overloaded_error",
        message: "Overloaded",
        headers: { "retry-after-ms": "10" },
      },
      streamReply({ content: [{ type: "text", text: "ok now" }] }),
    );
    const deltas = await collect(streamProvider(provider(), hello));
    expect(deltas.at(-1)).toMatchObject({ type: "response", response: { content: "ok now" } });
    expect(server.requests).toHaveLength(2);
  });

  it("never retries inside the SDK, even with a caller's client built with retries", async () => {
    server.enqueue({ type: "error", status: 500, errorType: "api_error", message: "boom" });
    const client = new Anthropic({ apiKey: "k", baseURL: server.url, maxRetries: 3 });
    const error = await failure(provider({ client }).complete(hello));
    expect(error.code).toBe("provider_unavailable");
    expect(server.requests).toHaveLength(1);
  });
});
