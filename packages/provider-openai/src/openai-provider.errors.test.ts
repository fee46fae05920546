import { ProviderError, type ProviderRequest } from "@openrath/core";
import { callProvider } from "@openrath/core/backend";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openaiProvider } from "./index.js";
import {
  chatCompletion,
  type OpenAIWireServer,
  startOpenAIWireServer,
  type WireReply,
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

async function failure(reply: WireReply, options: Parameters<typeof openaiProvider>[0] = {}) {
  server.enqueue(reply);
  const error = await provider(options)
    .complete(hello)
    .catch((e: unknown) => e);
  expect(ProviderError.isInstance(error)).toBe(true);
  return error as ProviderError;
}

describe("HTTP errors", () => {
  it("maps 429 to provider_rate_limited with retryAfterMs from retry-after seconds", async () => {
    const error = await failure({
      type: "error",
      status: 429,
      message: "Rate limit reached for gpt-4o-mini on requests per min (RPM): Limit 3, Used 3.",
      errorType: "requests",
      code: "rate_limit_exceeded",
      headers: { "retry-after": "2" },
    });
    expect(error).toMatchObject({
      code: "provider_rate_limited",
      status: 429,
      retryable: true,
      retryAfterMs: 2000,
    });
    expect(error.message).toMatch(/gpt-4o-mini/);
    expect(error.message).toMatch(/Rate limit reached/);
    expect(error.details).toMatchObject({ model: "gpt-4o-mini", status: 429, code: "rate_limit_exceeded" });
    expect(error.details.requestId).toMatch(/^req_/);
  });

  it("prefers retry-after-ms, and reads an HTTP-date retry-after", async () => {
    const ms = await failure({
      type: "error",
      status: 429,
      message: "slow down",
      headers: { "retry-after-ms": "250", "retry-after": "9" },
    });
    expect(ms.retryAfterMs).toBe(250);
    const date = await failure({
      type: "error",
      status: 429,
      message: "slow down",
      headers: { "retry-after": new Date(Date.now() + 5_000).toUTCString() },
    });
    expect(date.retryAfterMs).toBeGreaterThan(3_000);
    expect(date.retryAfterMs).toBeLessThanOrEqual(5_000);
  });

  it("leaves retryAfterMs undefined without a retry-after header", async () => {
    const error = await failure({ type: "error", status: 429, message: "slow down" });
    expect(error.retryAfterMs).toBeUndefined();
  });

  it("marks a 429 for an exhausted quota as not retryable", async () => {
    const error = await failure({
      type: "error",
      status: 429,
      message: "You exceeded your current quota, please check your plan and billing details.",
      errorType: "insufficient_quota",
      code: "insufficient_quota",
    });
    expect(error).toMatchObject({ code: "provider_rate_limited", retryable: false, status: 429 });
    expect(error.message).toMatch(/billing/);
  });

  it.each([401, 403])("maps %i to provider_auth", async (status) => {
    const error = await failure({
      type: "error",
      status,
      message: "Incorrect API key provided: sk-test.",
      errorType: "invalid_request_error",
      code: "invalid_api_key",
    });
    expect(error).toMatchObject({ code: "provider_auth", status, retryable: false });
    expect(error.message).toMatch(/OPENAI_API_KEY/);
  });

  it("maps 400 to provider_bad_request with the server's message and parameter", async () => {
    const error = await failure({
      type: "error",
      status: 400,
      message: "Invalid value for 'temperature': must be at most 2.",
      errorType: "invalid_request_error",
      param: "temperature",
      code: "invalid_value",
    });
    expect(error).toMatchObject({ code: "provider_bad_request", status: 400, retryable: false });
    expect(error.message).toMatch(/Invalid value for 'temperature'/);
    expect(error.message).toMatch(/`temperature`/);
    expect(error.details).toMatchObject({ param: "temperature", type: "invalid_request_error" });
  });

  it("maps 404 (an unknown model) to provider_bad_request naming the model and base URL", async () => {
    const error = await failure({
      type: "error",
      status: 404,
      message: "The model `gpt-9` does not exist or you do not have access to it.",
      code: "model_not_found",
    });
    expect(error).toMatchObject({ code: "provider_bad_request", status: 404 });
    expect(error.message).toMatch(/does not exist/);
    expect(error.message).toContain(server.baseURL);
  });

  it("maps 422 to provider_bad_request", async () => {
    expect(await failure({ type: "error", status: 422, message: "bad" })).toMatchObject({
      code: "provider_bad_request",
      status: 422,
    });
  });

  it("maps 408 to provider_timeout", async () => {
    expect(await failure({ type: "error", status: 408, message: "timed out" })).toMatchObject({
      code: "provider_timeout",
      status: 408,
      retryable: true,
    });
  });

  it.each([500, 502, 503, 529])("maps %i to provider_unavailable", async (status) => {
    const error = await failure({
      type: "error",
      status,
      message: "The server had an error while processing your request.",
      errorType: "server_error",
    });
    expect(error).toMatchObject({ code: "provider_unavailable", status, retryable: true });
    expect(error.message).toMatch(/The server had an error/);
  });

  it("honours x-should-retry both ways", async () => {
    const conflict = await failure({
      type: "error",
      status: 409,
      message: "lock timeout",
      headers: { "x-should-retry": "true" },
    });
    expect(conflict).toMatchObject({ code: "provider_bad_request", retryable: true });
    const broken = await failure({
      type: "error",
      status: 500,
      message: "permanent",
      headers: { "x-should-retry": "false" },
    });
    expect(broken).toMatchObject({ code: "provider_unavailable", retryable: false });
  });

  it("keeps the SDK error as the cause", async () => {
    const error = await failure({ type: "error", status: 500, message: "boom" });
    expect((error.cause as { status?: number }).status).toBe(500);
  });
});

describe("network errors, timeouts and aborts", () => {
  it("maps a refused connection to provider_connection naming the base URL", async () => {
    const closed = await startOpenAIWireServer();
    await closed.close();
    const p = openaiProvider({ baseURL: closed.baseURL, apiKey: "sk-test", model: "gpt-4o-mini" });
    const error = await p.complete(hello).catch((e: unknown) => e);
    expect(ProviderError.isInstance(error, "provider_connection")).toBe(true);
    expect((error as ProviderError).retryable).toBe(true);
    expect((error as ProviderError).message).toContain(closed.baseURL);
    expect((error as ProviderError).cause).toBeDefined();
  });

  it("maps a server that never answers to provider_timeout after timeoutMs", async () => {
    const started = Date.now();
    const error = await failure({ type: "hang" }, { timeoutMs: 150 });
    expect(error).toMatchObject({ code: "provider_timeout", retryable: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(await server.requests[0]!.closedEarly).toBe(true);
  });

  it("rejects with aborted when the signal fires during the call, and the server sees the connection close", async () => {
    server.enqueue({ type: "hang" });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("stop")), 50);
    const error = await provider()
      .complete(hello, { signal: controller.signal })
      .catch((e: unknown) => e);
    expect(ProviderError.isInstance(error, "aborted")).toBe(true);
    expect((error as ProviderError).retryable).toBe(false);
    expect((error as ProviderError).cause).toEqual(new Error("stop"));
    expect(await server.requests[0]!.closedEarly).toBe(true);
  });

  it("rejects at once with aborted, sending nothing, when the signal has already fired", async () => {
    const error = await provider()
      .complete(hello, { signal: AbortSignal.abort() })
      .catch((e: unknown) => e);
    expect(ProviderError.isInstance(error, "aborted")).toBe(true);
    expect(server.requests).toHaveLength(0);
  });

  it("maps a reply body cut mid-way to provider_connection", async () => {
    // A streamed body to a complete call: the SDK reads it as JSON and the socket dies under it.
    server.enqueue({
      type: "stream",
      events: [{ raw: '{"id": "chatcmpl-1", ' }],
      cut: true,
      headers: { "content-type": "application/json" },
    });
    const error = await provider()
      .complete(hello)
      .catch((e: unknown) => e);
    expect(ProviderError.isInstance(error, "provider_connection")).toBe(true);
    expect((error as ProviderError).retryable).toBe(true);
  });
});

describe("retries through core's callProvider", () => {
  it("retries a 429 once after the server's retry-after and returns the one successful response", async () => {
    server.enqueue(
      {
        type: "error",
        status: 429,
        message: "slow down",
        code: "rate_limit_exceeded",
        headers: { "retry-after": "0.05" },
      },
      { type: "json", body: chatCompletion({ content: "finally" }) },
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
    expect(server.requests[1]!.body).toEqual(server.requests[0]!.body);
  });

  it("honours retry-after-ms between attempts", async () => {
    server.enqueue(
      { type: "error", status: 429, message: "slow down", headers: { "retry-after-ms": "80" } },
      { type: "json", body: chatCompletion({ content: "ok" }) },
    );
    const started = Date.now();
    await callProvider(provider(), hello);
    expect(Date.now() - started).toBeGreaterThanOrEqual(75);
    expect(server.requests).toHaveLength(2);
  });

  it("retries 5xx, but not 400, and sends exactly one request per attempt (the SDK never retries)", async () => {
    server.enqueue(
      { type: "error", status: 503, message: "overloaded", errorType: "server_error" },
      { type: "error", status: 500, message: "boom", errorType: "server_error" },
      { type: "json", body: chatCompletion({ content: "third time" }) },
    );
    const response = await callProvider(provider(), hello, { retry: { baseDelayMs: 1 } });
    expect(response.content).toBe("third time");
    expect(server.requests).toHaveLength(3);

    server.enqueue({ type: "error", status: 400, message: "bad" });
    await expect(callProvider(provider(), hello, { retry: { baseDelayMs: 1 } })).rejects.toMatchObject({
      code: "provider_bad_request",
    });
    expect(server.requests).toHaveLength(4);
  });

  it("gives up after maxAttempts with the last error", async () => {
    server.enqueue(
      { type: "error", status: 500, message: "first" },
      { type: "error", status: 500, message: "second" },
    );
    const error = await callProvider(provider(), hello, { retry: { maxAttempts: 2, baseDelayMs: 1 } }).catch(
      (e: unknown) => e,
    );
    expect((error as ProviderError).message).toMatch(/second/);
    expect(server.requests).toHaveLength(2);
  });
});
