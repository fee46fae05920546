import { OpenRathError, ProviderError, type ProviderRequest } from "@openrath/core";
import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { openaiProvider } from "./index.js";
import {
  chatCompletion,
  type OpenAIWireServer,
  startOpenAIWireServer,
} from "./testing/openai-wire-server.js";

let server: OpenAIWireServer;

beforeEach(async () => {
  for (const name of [
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_MODEL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
  ]) {
    vi.stubEnv(name, "");
  }
  server = await startOpenAIWireServer();
});

afterEach(async () => {
  vi.unstubAllEnvs();
  await server.close();
});

const provider = (options: Parameters<typeof openaiProvider>[0] = {}) =>
  openaiProvider({ baseURL: server.baseURL, apiKey: "sk-test", model: "gpt-4o-mini", ...options });

const hello: ProviderRequest = { messages: [{ role: "user", content: "Hello" }] };

async function sent(request: ProviderRequest, options: Parameters<typeof openaiProvider>[0] = {}) {
  server.enqueue({ type: "json", body: chatCompletion({ content: "ok" }) });
  await provider(options).complete(request);
  return server.requests.at(-1)!.body;
}

describe("openaiProvider construction", () => {
  it("names itself openai, speaks contract v1 and keeps the default model", () => {
    const p = provider();
    expect(p.name).toBe("openai");
    expect(p.specVersion).toBe("v1");
    expect(p.model).toBe("gpt-4o-mini");
    expect(typeof p.stream).toBe("function");
  });

  it("fails with invalid_argument when neither options.model nor OPENAI_MODEL names a model", () => {
    const attempt = () => openaiProvider({ baseURL: server.baseURL, apiKey: "sk-test" });
    expect(attempt).toThrow(OpenRathError);
    try {
      attempt();
    } catch (error) {
      expect(OpenRathError.isInstance(error, "invalid_argument")).toBe(true);
      expect((error as Error).message).toMatch(/OPENAI_MODEL/);
    }
  });

  it("reads the model, key and base URL from OPENAI_MODEL, OPENAI_API_KEY and OPENAI_BASE_URL", async () => {
    vi.stubEnv("OPENAI_MODEL", "env-model");
    vi.stubEnv("OPENAI_API_KEY", "sk-from-env");
    vi.stubEnv("OPENAI_BASE_URL", server.baseURL);
    const p = openaiProvider();
    expect(p.model).toBe("env-model");
    server.enqueue({ type: "json", body: chatCompletion({ content: "ok" }) });
    await p.complete(hello);
    expect(server.requests[0]!.body.model).toBe("env-model");
    expect(server.requests[0]!.headers.authorization).toBe("Bearer sk-from-env");
  });

  it("prefers options over the environment", async () => {
    vi.stubEnv("OPENAI_MODEL", "env-model");
    vi.stubEnv("OPENAI_API_KEY", "sk-from-env");
    vi.stubEnv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1");
    const p = openaiProvider({ model: "opt-model", apiKey: "sk-opt", baseURL: server.baseURL });
    server.enqueue({ type: "json", body: chatCompletion({ content: "ok" }) });
    await p.complete(hello);
    expect(server.requests[0]!.body.model).toBe("opt-model");
    expect(server.requests[0]!.headers.authorization).toBe("Bearer sk-opt");
  });

  it("refuses to build a client for api.openai.com without a key", () => {
    try {
      openaiProvider({ model: "gpt-4o-mini" });
      expect.unreachable();
    } catch (error) {
      expect(OpenRathError.isInstance(error, "invalid_argument")).toBe(true);
      expect((error as Error).message).toMatch(/OPENAI_API_KEY/);
    }
  });

  it("talks to a keyless OpenAI-compatible server without an Authorization header", async () => {
    const p = openaiProvider({ baseURL: server.baseURL, model: "llama3" });
    server.enqueue({ type: "json", body: chatCompletion({ content: "ok" }) });
    await p.complete(hello);
    expect(server.requests[0]!.headers.authorization).toBeUndefined();
  });

  it("sends custom headers, organization and project", async () => {
    await sent(hello, { headers: { "x-gateway": "yes" }, organization: "org-1", project: "proj-1" });
    const headers = server.requests[0]!.headers;
    expect(headers["x-gateway"]).toBe("yes");
    expect(headers["openai-organization"]).toBe("org-1");
    expect(headers["openai-project"]).toBe("proj-1");
  });

  it("refuses an unknown option and a bad one with invalid_argument, never showing a key or a header", () => {
    const error = (() => {
      try {
        openaiProvider({
          model: "m",
          apiKey: 42,
          baseUrl: "http://x",
          headers: { authorization: 1 },
        } as never);
      } catch (e) {
        return e as OpenRathError;
      }
    })();
    expect(OpenRathError.isInstance(error, "invalid_argument")).toBe(true);
    expect(error!.message).toMatch(/^Invalid options of openaiProvider\(\), 3 problems:/);
    expect(error!.message).toContain(
      '"baseUrl" is "http://x"; it is not an option of openaiProvider(); the fields are api, apiKey, baseURL,',
    );
    expect(error!.message).toContain('"apiKey" is given (not shown: it may be a secret)');
    expect(error!.message).toContain('"headers.authorization" is given (not shown');
    expect(() => openaiProvider({ model: "m", baseURL: "localhost:11434/v1" })).toThrow(/"baseURL"/);
  });

  it("rejects a timeoutMs that is not a positive number", () => {
    for (const timeoutMs of [0, -1, Number.NaN]) {
      expect(() => provider({ timeoutMs })).toThrow(/timeoutMs/);
    }
  });

  it("uses a pre-built client as is", async () => {
    const client = new OpenAI({ apiKey: "sk-client", baseURL: server.baseURL, maxRetries: 5 });
    const p = openaiProvider({ client, model: "gpt-4o-mini" });
    server.enqueue({ type: "error", status: 500, message: "boom", errorType: "server_error" });
    await expect(p.complete(hello)).rejects.toMatchObject({ code: "provider_unavailable" });
    // The client's own maxRetries is overridden per call: core does the retrying.
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.headers.authorization).toBe("Bearer sk-client");
  });

  it("uses the given fetch", async () => {
    const seen: string[] = [];
    const p = provider({
      fetch: (input, init) => {
        seen.push(String(input));
        return fetch(input, init);
      },
    });
    server.enqueue({ type: "json", body: chatCompletion({ content: "ok" }) });
    await p.complete(hello);
    expect(seen).toEqual([`${server.baseURL}/chat/completions`]);
  });
});

describe("request mapping (request → wire)", () => {
  it("posts the messages as they are, with the model, and no stream flag", async () => {
    const messages: ProviderRequest["messages"] = [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Weather?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } },
        ],
      },
      { role: "tool", content: '{"temp":3}', tool_call_id: "call_1" },
    ];
    const body = await sent({ messages });
    expect(server.requests[0]!.method).toBe("POST");
    expect(server.requests[0]!.path).toBe("/v1/chat/completions");
    expect(body).toEqual({ model: "gpt-4o-mini", messages });
  });

  it("lets a request override the model", async () => {
    expect((await sent({ ...hello, model: "gpt-4.1" })).model).toBe("gpt-4.1");
  });

  it("sends tools as function tools with the schema as given and strict passed through", async () => {
    const parameters = {
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
      additionalProperties: false,
    };
    const body = await sent({
      ...hello,
      tools: [
        {
          type: "function",
          function: { name: "weather", description: "Weather now", parameters, strict: true },
        },
        { type: "function", function: { name: "time", parameters: { type: "object", properties: {} } } },
      ],
    });
    expect(body.tools).toEqual([
      {
        type: "function",
        function: { name: "weather", description: "Weather now", parameters, strict: true },
      },
      { type: "function", function: { name: "time", parameters: { type: "object", properties: {} } } },
    ]);
  });

  it.each([
    ["auto", "auto"],
    ["none", "none"],
    ["required", "required"],
    [{ name: "weather" }, { type: "function", function: { name: "weather" } }],
  ] as const)("maps tool choice %j to %j", async (choice, wire) => {
    const body = await sent({
      ...hello,
      tools: [{ type: "function", function: { name: "weather", parameters: { type: "object" } } }],
      toolChoice: choice,
      parallelToolCalls: false,
    });
    expect(body.tool_choice).toEqual(wire);
    expect(body.parallel_tool_calls).toBe(false);
  });

  it("leaves out tools, tool_choice and parallel_tool_calls when there are no tools (OpenAI rejects them)", async () => {
    const body = await sent({ ...hello, tools: [], toolChoice: "auto", parallelToolCalls: true });
    expect(body).not.toHaveProperty("tools");
    expect(body).not.toHaveProperty("tool_choice");
    expect(body).not.toHaveProperty("parallel_tool_calls");
  });

  it("maps sampling fields to their wire names", async () => {
    const body = await sent({
      ...hello,
      temperature: 0.2,
      topP: 0.9,
      maxTokens: 256,
      stop: ["END", "STOP"],
      seed: 7,
    });
    expect(body).toMatchObject({
      temperature: 0.2,
      top_p: 0.9,
      max_completion_tokens: 256,
      stop: ["END", "STOP"],
      seed: 7,
    });
    expect(body).not.toHaveProperty("max_tokens");
  });

  it("sends maxTokens as max_tokens with maxTokensField for servers that only read that name", async () => {
    const body = await sent({ ...hello, maxTokens: 64 }, { maxTokensField: "max_tokens" });
    expect(body.max_tokens).toBe(64);
    expect(body).not.toHaveProperty("max_completion_tokens");
    const fallback = await sent(hello, { maxTokensField: "max_tokens", maxTokens: 32 });
    expect(fallback.max_tokens).toBe(32);
  });

  it("rejects a maxTokensField that is neither wire name", () => {
    expect(() => provider({ maxTokensField: "maxTokens" as never })).toThrow(/maxTokensField/);
  });

  it("leaves reasoning items out of the messages it sends (Chat Completions has no field for them)", async () => {
    const body = await sent({
      messages: [
        { role: "user", content: "Hi" },
        {
          role: "assistant",
          content: "Hello",
          reasoning: [{ provider: "anthropic", type: "thinking", data: { thinking: "x", signature: "s" } }],
        },
        { role: "user", content: "Again" },
      ],
    });
    expect(body.messages).toEqual([
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello" },
      { role: "user", content: "Again" },
    ]);
  });

  it("sends zero values rather than dropping them", async () => {
    const body = await sent({ ...hello, temperature: 0, seed: 0 });
    expect(body.temperature).toBe(0);
    expect(body.seed).toBe(0);
  });

  it("uses the provider's defaults where the request is silent, and the request's values where it is not", async () => {
    const defaults = {
      temperature: 0.5,
      topP: 0.8,
      maxTokens: 100,
      stop: ["X"],
      seed: 1,
      parallelToolCalls: true,
    };
    const tools = [{ type: "function", function: { name: "t", parameters: { type: "object" } } }] as const;
    const silent = await sent({ ...hello, tools }, defaults);
    expect(silent).toMatchObject({
      temperature: 0.5,
      top_p: 0.8,
      max_completion_tokens: 100,
      stop: ["X"],
      seed: 1,
      parallel_tool_calls: true,
    });
    const loud = await sent(
      {
        ...hello,
        tools,
        temperature: 1,
        topP: 1,
        maxTokens: 5,
        stop: ["Y"],
        seed: 2,
        parallelToolCalls: false,
      },
      defaults,
    );
    expect(loud).toMatchObject({
      temperature: 1,
      top_p: 1,
      max_completion_tokens: 5,
      stop: ["Y"],
      seed: 2,
      parallel_tool_calls: false,
    });
  });

  it("leaves an empty stop list out", async () => {
    expect(await sent({ ...hello, stop: [] })).not.toHaveProperty("stop");
  });

  it.each([
    [{ type: "text" }, { type: "text" }],
    [{ type: "json_object" }, { type: "json_object" }],
    [
      { type: "json_schema", name: "person", schema: { type: "object" }, strict: true },
      { type: "json_schema", json_schema: { name: "person", schema: { type: "object" }, strict: true } },
    ],
    [
      { type: "json_schema", name: "person", schema: { type: "object" } },
      { type: "json_schema", json_schema: { name: "person", schema: { type: "object" } } },
    ],
  ] as const)("maps response format %j", async (format, wire) => {
    expect((await sent({ ...hello, responseFormat: format })).response_format).toEqual(wire);
  });

  it("merges extra last: the provider's first, then the request's", async () => {
    const body = await sent(
      { ...hello, temperature: 0.1, extra: { temperature: 0.9, user: "u-2", reasoning_effort: "high" } },
      { extra: { user: "u-1", store: false } },
    );
    expect(body).toMatchObject({ temperature: 0.9, user: "u-2", store: false, reasoning_effort: "high" });
  });

  it("never lets extra turn a complete call into a stream", async () => {
    const body = await sent({ ...hello, extra: { stream: true, stream_options: { include_usage: true } } });
    expect(body).not.toHaveProperty("stream");
    expect(body).not.toHaveProperty("stream_options");
  });
});

describe("response mapping (wire → response)", () => {
  it("returns the text, model and usage with cached and reasoning tokens", async () => {
    server.enqueue({
      type: "json",
      body: chatCompletion({
        content: "Hello there",
        model: "gpt-4o-mini-2024-07-18",
        usage: {
          prompt_tokens: 120,
          completion_tokens: 30,
          total_tokens: 150,
          cached_tokens: 64,
          reasoning_tokens: 12,
        },
      }),
    });
    const response = await provider().complete(hello);
    expect(response).toEqual({
      content: "Hello there",
      toolCalls: [],
      finishReason: "stop",
      model: "gpt-4o-mini-2024-07-18",
      usage: {
        promptTokens: 120,
        completionTokens: 30,
        totalTokens: 150,
        cachedPromptTokens: 64,
        reasoningTokens: 12,
      },
    });
  });

  it("returns tool calls with their raw arguments text and content null", async () => {
    server.enqueue({
      type: "json",
      body: chatCompletion({
        toolCalls: [
          { id: "call_a", name: "weather", arguments: ['{"city": "Oslo"}'] },
          { id: "call_b", name: "time", arguments: ["{ }"] },
        ],
      }),
    });
    const response = await provider().complete(hello);
    expect(response.content).toBeNull();
    expect(response.finishReason).toBe("tool_calls");
    expect(response.toolCalls).toEqual([
      { id: "call_a", type: "function", function: { name: "weather", arguments: '{"city": "Oslo"}' } },
      { id: "call_b", type: "function", function: { name: "time", arguments: "{ }" } },
    ]);
  });

  it("keeps text that comes with tool calls", async () => {
    server.enqueue({
      type: "json",
      body: chatCompletion({ content: "Checking.", toolCalls: [{ id: "c", name: "t", arguments: ["{}"] }] }),
    });
    const response = await provider().complete(hello);
    expect(response.content).toBe("Checking.");
    expect(response.toolCalls).toHaveLength(1);
  });

  it.each([
    ["stop", "stop"],
    ["length", "length"],
    ["content_filter", "content_filter"],
    ["function_call", "tool_calls"],
    ["eos_token", "stop"],
    [null, "stop"],
  ] as const)("maps finish_reason %j to %j", async (wire, mapped) => {
    const body = chatCompletion({ content: "x" });
    (body.choices[0] as { finish_reason: unknown }).finish_reason = wire;
    server.enqueue({ type: "json", body });
    expect((await provider().complete(hello)).finishReason).toBe(mapped);
  });

  it("reports tool_calls when a compatible server says stop but called tools", async () => {
    server.enqueue({
      type: "json",
      body: chatCompletion({ toolCalls: [{ id: "c", name: "t", arguments: ["{}"] }], finishReason: "stop" }),
    });
    expect((await provider().complete(hello)).finishReason).toBe("tool_calls");
  });

  it("turns a legacy function_call into a tool call", async () => {
    const body = chatCompletion({ finishReason: "function_call" });
    Object.assign(body.choices[0]!.message, {
      function_call: { name: "weather", arguments: '{"city":"Oslo"}' },
    });
    server.enqueue({ type: "json", body });
    const response = await provider().complete(hello);
    expect(response.finishReason).toBe("tool_calls");
    expect(response.toolCalls).toEqual([
      { id: "function_call", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } },
    ]);
  });

  it("gives a refusal as the text with finish reason content_filter", async () => {
    server.enqueue({ type: "json", body: chatCompletion({ refusal: "I can't help with that." }) });
    const response = await provider().complete(hello);
    expect(response.content).toBe("I can't help with that.");
    expect(response.finishReason).toBe("content_filter");
  });

  it("returns empty text rather than null when the reply has neither text nor tool calls", async () => {
    server.enqueue({ type: "json", body: chatCompletion({ finishReason: "length" }) });
    const response = await provider().complete(hello);
    expect(response.content).toBe("");
    expect(response.finishReason).toBe("length");
  });

  it("leaves usage out when the server reports none, and fills a missing total", async () => {
    server.enqueue({ type: "json", body: chatCompletion({ content: "x", usage: null }) });
    expect(await provider().complete(hello)).not.toHaveProperty("usage");
    const body = chatCompletion({ content: "x" });
    (body as { usage?: unknown }).usage = { prompt_tokens: 3, completion_tokens: 4 };
    server.enqueue({ type: "json", body });
    expect((await provider().complete(hello)).usage).toEqual({
      promptTokens: 3,
      completionTokens: 4,
      totalTokens: 7,
    });
  });

  it("reports an empty usage object as no usage, not as zero tokens", async () => {
    const body = chatCompletion({ content: "x" });
    (body as { usage?: unknown }).usage = {};
    server.enqueue({ type: "json", body });
    expect(await provider().complete(hello)).not.toHaveProperty("usage");
  });

  it("falls back to the requested model when the server names none", async () => {
    const body = chatCompletion({ content: "x" });
    (body as { model?: string }).model = "";
    server.enqueue({ type: "json", body });
    expect((await provider().complete({ ...hello, model: "local-7b" })).model).toBe("local-7b");
  });

  it("fails with provider_response when the body has no choices", async () => {
    server.enqueue({ type: "json", body: { ...chatCompletion(), choices: [] } });
    const error = await provider()
      .complete(hello)
      .catch((e: unknown) => e);
    expect(ProviderError.isInstance(error, "provider_response")).toBe(true);
    expect((error as ProviderError).retryable).toBe(false);
  });

  it("fails with provider_response when a JSON reply does not parse", async () => {
    server.enqueue({
      type: "text",
      body: '{"id": "chatcmpl-1", "choices": [',
      contentType: "application/json",
    });
    await expect(provider().complete(hello)).rejects.toMatchObject({ code: "provider_response" });
  });

  it("fails with provider_response when the server answers with something that is not JSON", async () => {
    server.enqueue({ type: "text", body: "<html>proxy page</html>", contentType: "text/html" });
    await expect(provider().complete(hello)).rejects.toMatchObject({ code: "provider_response" });
  });
});

describe("structured output", () => {
  it("sends a json_schema response format and returns the JSON text that matches it", async () => {
    const schema = {
      type: "object",
      properties: { name: { type: "string" }, age: { type: "integer" } },
      required: ["name", "age"],
      additionalProperties: false,
    };
    server.enqueue({ type: "json", body: chatCompletion({ content: '{"name":"Ada","age":36}' }) });
    const response = await provider().complete({
      messages: [{ role: "user", content: "Who wrote the first program?" }],
      responseFormat: { type: "json_schema", name: "person", schema, strict: true },
    });
    expect(server.requests[0]!.body.response_format).toEqual({
      type: "json_schema",
      json_schema: { name: "person", schema, strict: true },
    });
    expect(JSON.parse(response.content!)).toEqual({ name: "Ada", age: 36 });
  });
});
