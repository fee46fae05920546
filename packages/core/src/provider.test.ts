import {
  OpenRathError,
  type ProviderCallOptions,
  type ProviderDelta,
  ProviderError,
  type ProviderErrorCode,
  type ProviderRequest,
  type ProviderResponse,
  type ProviderV1,
} from "@openrath/core";
import { callProvider, DeltaAccumulator, retryDelay, streamProvider } from "@openrath/core/backend";
import { describe, expect, it } from "vitest";

const request: ProviderRequest = { messages: [{ role: "user", content: "hi" }] };
const answer = (content: string): ProviderResponse => ({
  content,
  toolCalls: [],
  finishReason: "stop",
  model: "m",
});

/** A provider whose calls follow a list of outcomes: an error to throw or a response to return. */
function flaky(outcomes: (ProviderResponse | Error)[]): ProviderV1 & { calls: number } {
  const provider = {
    specVersion: "v1" as const,
    name: "flaky",
    model: "m",
    calls: 0,
    async complete(_request: ProviderRequest, options?: ProviderCallOptions) {
      if (options?.signal?.aborted) throw new ProviderError("aborted", "aborted");
      const outcome = outcomes[provider.calls++];
      if (!outcome) throw new Error("no more outcomes");
      if (outcome instanceof Error) throw outcome;
      return outcome;
    },
  };
  return provider;
}

const transient = (code: ProviderErrorCode = "provider_unavailable", extra = {}) =>
  new ProviderError(code, `scripted ${code}`, extra);

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

async function collect(stream: AsyncIterable<ProviderDelta>): Promise<ProviderDelta[]> {
  const out: ProviderDelta[] = [];
  for await (const delta of stream) out.push(delta);
  return out;
}

describe("ProviderError", () => {
  it.each([
    ["provider_rate_limited", true],
    ["provider_unavailable", true],
    ["provider_connection", true],
    ["provider_timeout", true],
    ["provider_stream", true],
    ["provider_bad_request", false],
    ["provider_auth", false],
    ["provider_response", false],
    ["replay_miss", false],
    ["script_exhausted", false],
    ["aborted", false],
  ] as const)("%s is retryable: %s", (code, retryable) => {
    const error = new ProviderError(code, "x");
    expect(error.retryable).toBe(retryable);
    expect(OpenRathError.isInstance(error, code)).toBe(true);
  });

  it("keeps an explicit retryable, retryAfterMs and status", () => {
    const error = new ProviderError("provider_bad_request", "x", {
      retryable: true,
      retryAfterMs: 10,
      status: 409,
    });
    expect([error.retryable, error.retryAfterMs, error.status]).toEqual([true, 10, 409]);
  });
});

describe("retryDelay", () => {
  const error = transient();

  it("doubles from the base delay, with up to one base of jitter", () => {
    const policy = { baseDelayMs: 100 };
    expect(retryDelay(1, error, policy, () => 0)).toBe(100);
    expect(retryDelay(2, error, policy, () => 0)).toBe(200);
    expect(retryDelay(3, error, policy, () => 0)).toBe(400);
    expect(retryDelay(3, error, policy, () => 0.999)).toBeCloseTo(499.9);
  });

  it("stays within [base·2^(n-1), base·2^(n-1) + base) for any jitter", () => {
    for (let attempt = 1; attempt <= 5; attempt++) {
      for (let i = 0; i < 50; i++) {
        const d = retryDelay(attempt, error, { baseDelayMs: 50, maxDelayMs: 1e9 });
        expect(d).toBeGreaterThanOrEqual(50 * 2 ** (attempt - 1));
        expect(d).toBeLessThan(50 * 2 ** (attempt - 1) + 50);
      }
    }
  });

  it("uses 500 ms base and a 30 s cap by default", () => {
    expect(retryDelay(1, error, {}, () => 0)).toBe(500);
    expect(retryDelay(20, error, {}, () => 0.5)).toBe(30_000);
  });

  it("caps the delay at maxDelayMs", () => {
    expect(retryDelay(10, error, { baseDelayMs: 100, maxDelayMs: 1000 }, () => 0)).toBe(1000);
  });

  it("honours the server's retry-after, capped at maxDelayMs and never negative", () => {
    const after = (ms: number) => transient("provider_rate_limited", { retryAfterMs: ms });
    expect(retryDelay(1, after(1234), {}, () => 0.9)).toBe(1234);
    expect(retryDelay(3, after(7), { baseDelayMs: 1000 })).toBe(7);
    expect(retryDelay(1, after(60_000), { maxDelayMs: 5000 })).toBe(5000);
    expect(retryDelay(1, after(-5))).toBe(0);
  });
});

describe("callProvider", () => {
  it("returns the first success after transient failures, reporting each retry", async () => {
    const provider = flaky([transient(), transient("provider_rate_limited"), answer("ok")]);
    const retries: { attempt: number; delayMs: number; code: string }[] = [];
    const response = await callProvider(provider, request, {
      retry: {
        baseDelayMs: 1,
        onRetry: ({ attempt, delayMs, error }) => retries.push({ attempt, delayMs, code: error.code }),
      },
    });
    expect(response.content).toBe("ok");
    expect(provider.calls).toBe(3);
    expect(retries.map((r) => [r.attempt, r.code])).toEqual([
      [1, "provider_unavailable"],
      [2, "provider_rate_limited"],
    ]);
    expect(retries[1]!.delayMs).toBeGreaterThanOrEqual(2);
  });

  it("throws the last error after maxAttempts", async () => {
    const last = transient("provider_timeout");
    const provider = flaky([transient(), transient(), last, answer("too late")]);
    const error = await rejection(
      callProvider(provider, request, { retry: { maxAttempts: 3, baseDelayMs: 1 } }),
    );
    expect(error).toBe(last);
    expect(provider.calls).toBe(3);
  });

  it("defaults to four attempts", async () => {
    const provider = flaky([transient(), transient(), transient(), transient(), answer("x")]);
    const error = await rejection(callProvider(provider, request, { retry: { baseDelayMs: 1 } }));
    expect(OpenRathError.isInstance(error, "provider_unavailable")).toBe(true);
    expect(provider.calls).toBe(4);
  });

  it.each([0, -3])("makes one attempt when maxAttempts is %s", async (maxAttempts) => {
    const provider = flaky([transient(), answer("x")]);
    await rejection(callProvider(provider, request, { retry: { maxAttempts, baseDelayMs: 1 } }));
    expect(provider.calls).toBe(1);
  });

  it("throws a non-retryable provider error at once", async () => {
    const bad = new ProviderError("provider_bad_request", "bad field");
    const provider = flaky([bad, answer("x")]);
    expect(await rejection(callProvider(provider, request, { retry: { baseDelayMs: 1 } }))).toBe(bad);
    expect(provider.calls).toBe(1);
  });

  it("throws any other error at once", async () => {
    const plain = new TypeError("bug in the adapter");
    const provider = flaky([plain, answer("x")]);
    expect(await rejection(callProvider(provider, request, { retry: { baseDelayMs: 1 } }))).toBe(plain);
    expect(provider.calls).toBe(1);
  });

  it("waits the server's retry-after before retrying", async () => {
    const provider = flaky([transient("provider_rate_limited", { retryAfterMs: 40 }), answer("ok")]);
    const delays: number[] = [];
    await callProvider(provider, request, { retry: { onRetry: ({ delayMs }) => delays.push(delayMs) } });
    expect(delays).toEqual([40]);
  });

  it("rejects with aborted when the signal fires during the backoff", async () => {
    const provider = flaky([transient("provider_rate_limited", { retryAfterMs: 60_000 }), answer("x")]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("user cancelled")), 10);
    const started = Date.now();
    const error = await rejection(callProvider(provider, request, { signal: controller.signal }));
    expect(OpenRathError.isInstance(error, "aborted")).toBe(true);
    expect((error as ProviderError).retryable).toBe(false);
    expect((error as Error).cause).toEqual(new Error("user cancelled"));
    expect(provider.calls).toBe(1);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("does not call the provider when the signal already fired", async () => {
    const provider = flaky([answer("x")]);
    const error = await rejection(callProvider(provider, request, { signal: AbortSignal.abort() }));
    expect(OpenRathError.isInstance(error, "aborted")).toBe(true);
    expect(provider.calls).toBe(0);
  });

  it("passes the signal on to the provider", async () => {
    const seen: (AbortSignal | undefined)[] = [];
    const provider: ProviderV1 = {
      specVersion: "v1",
      name: "p",
      model: "m",
      async complete(_r, options) {
        seen.push(options?.signal);
        return answer("x");
      },
    };
    const controller = new AbortController();
    await callProvider(provider, request, { signal: controller.signal });
    expect(seen).toEqual([controller.signal]);
  });
});

/** A streaming provider whose attempts follow a list: deltas to yield, then optionally an error. */
function streaming(attempts: { deltas: ProviderDelta[]; error?: Error }[]): ProviderV1 & { opens: number } {
  const provider = {
    specVersion: "v1" as const,
    name: "streaming",
    model: "m",
    opens: 0,
    async complete(): Promise<ProviderResponse> {
      throw new Error("complete should not be called when stream exists");
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

describe("streamProvider", () => {
  const done: ProviderDelta = { type: "response", response: answer("hello") };

  it("yields the provider's deltas as they come", async () => {
    const deltas: ProviderDelta[] = [{ type: "text", text: "hel" }, { type: "text", text: "lo" }, done];
    expect(await collect(streamProvider(streaming([{ deltas }]), request))).toEqual(deltas);
  });

  it("retries a transient failure that happens before the first delta", async () => {
    const provider = streaming([
      { deltas: [], error: transient("provider_connection") },
      { deltas: [{ type: "text", text: "hello" }, done] },
    ]);
    const out = await collect(streamProvider(provider, request, { retry: { baseDelayMs: 1 } }));
    expect(out).toEqual([{ type: "text", text: "hello" }, done]);
    expect(provider.opens).toBe(2);
  });

  it("does not replay a stream that already produced output: its error is thrown", async () => {
    const cut = transient("provider_stream");
    const provider = streaming([
      { deltas: [{ type: "text", text: "hel" }], error: cut },
      { deltas: [{ type: "text", text: "hello" }, done] },
    ]);
    const seen: ProviderDelta[] = [];
    let error: unknown;
    try {
      for await (const delta of streamProvider(provider, request, { retry: { baseDelayMs: 1 } }))
        seen.push(delta);
    } catch (e) {
      error = e;
    }
    expect(error).toBe(cut);
    expect(seen).toEqual([{ type: "text", text: "hel" }]);
    expect(provider.opens).toBe(1);
  });

  it("throws a non-retryable error before the first delta at once", async () => {
    const bad = new ProviderError("provider_auth", "bad key");
    const provider = streaming([{ deltas: [], error: bad }, { deltas: [done] }]);
    expect(await rejection(collect(streamProvider(provider, request)))).toBe(bad);
    expect(provider.opens).toBe(1);
  });

  it("gives up after maxAttempts", async () => {
    const provider = streaming([
      { deltas: [], error: transient() },
      { deltas: [], error: transient("provider_timeout") },
      { deltas: [done] },
    ]);
    const error = await rejection(
      collect(streamProvider(provider, request, { retry: { maxAttempts: 2, baseDelayMs: 1 } })),
    );
    expect(OpenRathError.isInstance(error, "provider_timeout")).toBe(true);
    expect(provider.opens).toBe(2);
  });

  it("rejects with aborted when the signal fires during the backoff", async () => {
    const provider = streaming([
      { deltas: [], error: transient("provider_rate_limited", { retryAfterMs: 60_000 }) },
      { deltas: [done] },
    ]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 10);
    const error = await rejection(collect(streamProvider(provider, request, { signal: controller.signal })));
    expect(OpenRathError.isInstance(error, "aborted")).toBe(true);
    expect(provider.opens).toBe(1);
  });

  it("falls back to complete for a provider without stream, yielding the text as one delta", async () => {
    const provider = flaky([answer("whole text")]);
    expect(await collect(streamProvider(provider, request))).toEqual([
      { type: "text", text: "whole text" },
      { type: "response", response: answer("whole text") },
    ]);
  });

  it("yields no text delta in the fallback when the response has no text", async () => {
    const calls: ProviderResponse = {
      content: null,
      toolCalls: [{ id: "c1", type: "function", function: { name: "t", arguments: "{}" } }],
      finishReason: "tool_calls",
      model: "m",
    };
    expect(await collect(streamProvider(flaky([calls]), request))).toEqual([
      { type: "response", response: calls },
    ]);
  });

  it("retries the fallback's complete like callProvider", async () => {
    const provider = flaky([transient(), answer("ok")]);
    const out = await collect(streamProvider(provider, request, { retry: { baseDelayMs: 1 } }));
    expect(out.at(-1)).toEqual({ type: "response", response: answer("ok") });
    expect(provider.calls).toBe(2);
  });
});

describe("DeltaAccumulator", () => {
  it("concatenates text and defaults finishReason to stop", () => {
    const acc = new DeltaAccumulator();
    acc.add({ type: "text", text: "Hel" });
    acc.add({ type: "text", text: "lo" });
    acc.add({ type: "response", response: answer("ignored") });
    expect(acc.response({ model: "m" })).toEqual({
      content: "Hello",
      toolCalls: [],
      finishReason: "stop",
      model: "m",
    });
  });

  it("gathers tool calls by index, in index order, whatever order the deltas came in", () => {
    const acc = new DeltaAccumulator();
    acc.add({ type: "tool_call", index: 1, id: "b", name: "second", arguments: '{"y"' });
    acc.add({ type: "tool_call", index: 0, id: "a", name: "fir" });
    acc.add({ type: "tool_call", index: 0, name: "st", arguments: '{"x":' });
    acc.add({ type: "tool_call", index: 1, arguments: ":2}" });
    acc.add({ type: "tool_call", index: 0, arguments: "1}" });
    const usage = { promptTokens: 3, completionTokens: 4, totalTokens: 7 };
    expect(acc.response({ model: "m", usage })).toEqual({
      content: null,
      toolCalls: [
        { id: "a", type: "function", function: { name: "first", arguments: '{"x":1}' } },
        { id: "b", type: "function", function: { name: "second", arguments: '{"y":2}' } },
      ],
      finishReason: "tool_calls",
      model: "m",
      usage,
    });
  });

  it("keeps text next to tool calls and an explicit finish reason", () => {
    const acc = new DeltaAccumulator();
    acc.add({ type: "text", text: "Let me check." });
    acc.add({ type: "tool_call", index: 0, id: "a", name: "t", arguments: "{}" });
    const response = acc.response({ model: "m", finishReason: "length" });
    expect(response.content).toBe("Let me check.");
    expect(response.finishReason).toBe("length");
    expect(response.toolCalls).toHaveLength(1);
  });

  it("gives empty text (not null) for a response with neither text nor calls", () => {
    expect(new DeltaAccumulator().response({ model: "m" }).content).toBe("");
  });
});
