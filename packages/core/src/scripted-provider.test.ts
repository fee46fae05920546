import {
  OpenRathError,
  type ProviderDelta,
  ProviderError,
  type ProviderRequest,
  ScriptedProvider,
  type ScriptedTurn,
} from "@openrath/core";
import { callProvider, DeltaAccumulator } from "@openrath/core/backend";
import { describe, expect, it } from "vitest";

const ask = (content: string): ProviderRequest => ({ messages: [{ role: "user", content }] });

async function rejection(promise: Promise<unknown>): Promise<ProviderError> {
  try {
    await promise;
  } catch (error) {
    if (OpenRathError.isInstance(error)) return error as ProviderError;
    throw error;
  }
  throw new Error("expected a rejection");
}

async function collect(stream: AsyncIterable<ProviderDelta>): Promise<ProviderDelta[]> {
  const out: ProviderDelta[] = [];
  for await (const delta of stream) out.push(delta);
  return out;
}

describe("ScriptedProvider: turns", () => {
  it("answers with its turns in order and keeps every request", async () => {
    const provider = new ScriptedProvider([{ text: "one" }, { text: "two" }]);
    expect(provider).toMatchObject({ specVersion: "v1", name: "scripted", model: "scripted" });
    const first = await provider.complete(ask("a"));
    const second = await provider.complete(ask("b"));
    expect([first.content, second.content]).toEqual(["one", "two"]);
    expect(provider.requests).toEqual([ask("a"), ask("b")]);
    expect(provider.callCount).toBe(2);
  });

  it("answers text-only turns with finish reason stop and the provider's model", async () => {
    const provider = new ScriptedProvider([{ text: "hi" }], "test-model");
    expect(await provider.complete(ask("x"))).toMatchObject({
      content: "hi",
      toolCalls: [],
      finishReason: "stop",
      model: "test-model",
    });
  });

  it("answers an empty turn with empty text", async () => {
    const response = await new ScriptedProvider([{}]).complete(ask("x"));
    expect(response.content).toBe("");
    expect(response.finishReason).toBe("stop");
  });

  it("builds tool calls in wire shape with deterministic ids across turns", async () => {
    const provider = new ScriptedProvider([
      {
        toolCalls: [
          { name: "a", arguments: { x: 1 } },
          { name: "b", arguments: '{"raw": tru' },
          { name: "c" },
        ],
      },
      {
        toolCalls: [
          { name: "d", arguments: "", id: "mine" },
          { name: "e", arguments: [1, 2] },
        ],
      },
    ]);
    const first = await provider.complete(ask("x"));
    const second = await provider.complete(ask("y"));
    expect(first.content).toBeNull();
    expect(first.finishReason).toBe("tool_calls");
    expect(first.toolCalls).toEqual([
      { id: "call_1", type: "function", function: { name: "a", arguments: '{"x":1}' } },
      { id: "call_2", type: "function", function: { name: "b", arguments: '{"raw": tru' } },
      { id: "call_3", type: "function", function: { name: "c", arguments: "{}" } },
    ]);
    expect(second.toolCalls.map((c) => [c.id, c.function.arguments])).toEqual([
      ["mine", ""],
      ["call_4", "[1,2]"],
    ]);
  });

  it("gives the same ids to a fresh provider with the same script", async () => {
    const script: ScriptedTurn[] = [{ toolCalls: [{ name: "a" }, { name: "b" }] }];
    const ids = async () =>
      (await new ScriptedProvider(script).complete(ask("x"))).toolCalls.map((c) => c.id);
    expect(await ids()).toEqual(await ids());
  });

  it("keeps an explicit finish reason and model", async () => {
    const provider = new ScriptedProvider([{ text: "cut", finishReason: "length", model: "other" }]);
    expect(await provider.complete(ask("x"))).toMatchObject({ finishReason: "length", model: "other" });
  });

  it("chooses turns with a function of the request and the 0-based call number", async () => {
    const seen: [string, number][] = [];
    const provider = new ScriptedProvider((request, call) => {
      const last = request.messages.at(-1)!;
      seen.push([String(last.content), call]);
      return { text: `echo ${last.content} #${call}` };
    });
    expect((await provider.complete(ask("a"))).content).toBe("echo a #0");
    expect((await provider.complete(ask("b"))).content).toBe("echo b #1");
    expect(seen).toEqual([
      ["a", 0],
      ["b", 1],
    ]);
  });
});

describe("ScriptedProvider: usage", () => {
  it("estimates about one token per four characters in and out", async () => {
    const request = ask("What is the weather like today?");
    const response = await new ScriptedProvider([{ text: "Sunny and warm." }]).complete(request);
    const promptTokens = Math.ceil(JSON.stringify(request.messages).length / 4);
    const completionTokens = Math.ceil("Sunny and warm.".length / 4);
    expect(response.usage).toEqual({
      promptTokens,
      completionTokens,
      totalTokens: promptTokens + completionTokens,
    });
  });

  it("counts tool-call arguments as completion tokens", async () => {
    const response = await new ScriptedProvider([
      { toolCalls: [{ name: "t", arguments: "12345678" }] },
    ]).complete(ask("x"));
    expect(response.usage?.completionTokens).toBe(2);
  });

  it("reports the scripted usage, filling what is missing", async () => {
    const provider = new ScriptedProvider([
      { text: "a", usage: { promptTokens: 10, completionTokens: 5 } },
      { text: "b", usage: { promptTokens: 1, completionTokens: 1, totalTokens: 99, cachedPromptTokens: 1 } },
    ]);
    expect((await provider.complete(ask("x"))).usage).toEqual({
      promptTokens: 10,
      completionTokens: 5,
      totalTokens: 15,
    });
    expect((await provider.complete(ask("x"))).usage).toEqual({
      promptTokens: 1,
      completionTokens: 1,
      totalTokens: 99,
      cachedPromptTokens: 1,
    });
  });
});

describe("ScriptedProvider: failures", () => {
  it("throws a scripted error with its code, retry-after and status, and counts the call", async () => {
    const provider = new ScriptedProvider([
      { error: { code: "provider_rate_limited", retryAfterMs: 250, status: 429 } },
      { text: "after" },
    ]);
    const error = await rejection(provider.complete(ask("x")));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({
      code: "provider_rate_limited",
      retryable: true,
      retryAfterMs: 250,
      status: 429,
      message: "Scripted provider_rate_limited on call 1.",
    });
    expect((await provider.complete(ask("x"))).content).toBe("after");
    expect(provider.requests).toHaveLength(2);
  });

  it("uses a scripted error message", async () => {
    const provider = new ScriptedProvider([{ error: { code: "provider_auth", message: "bad key" } }]);
    const error = await rejection(provider.complete(ask("x")));
    expect(error.message).toBe("bad key");
    expect(error.retryable).toBe(false);
  });

  it("is retried by callProvider like a real transient failure", async () => {
    const provider = new ScriptedProvider([
      { error: { code: "provider_unavailable" } },
      { error: { code: "provider_rate_limited", retryAfterMs: 1 } },
      { text: "third time" },
    ]);
    const response = await callProvider(provider, ask("x"), { retry: { baseDelayMs: 1 } });
    expect(response.content).toBe("third time");
    expect(provider.callCount).toBe(3);
  });

  it("says which call ran out of script and what the request ended with", async () => {
    const provider = new ScriptedProvider([{ text: "only" }]);
    await provider.complete(ask("first"));
    const error = await rejection(provider.complete(ask("second question")));
    expect(error.code).toBe("script_exhausted");
    expect(error.retryable).toBe(false);
    expect(error.details).toEqual({ call: 1 });
    expect(error.message).toBe(
      'ScriptedProvider has no turn for call 2 (the script has 1); the request ended with a user message: "second question".',
    );
  });

  it("says when a script function returned nothing", async () => {
    const error = await rejection(new ScriptedProvider(() => undefined).complete({ messages: [] }));
    expect(error.code).toBe("script_exhausted");
    expect(error.message).toContain("the script function returned nothing");
    expect(error.message).toContain("no messages");
  });

  it("waits delayMs and rejects with aborted when the signal fires meanwhile", async () => {
    const provider = new ScriptedProvider([{ text: "slow", delayMs: 60_000 }]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 10);
    const error = await rejection(provider.complete(ask("x"), { signal: controller.signal }));
    expect(error.code).toBe("aborted");
    expect(error.retryable).toBe(false);
  });

  it("rejects with aborted for a signal that already fired", async () => {
    const error = await rejection(
      new ScriptedProvider([{ text: "x" }]).complete(ask("x"), { signal: AbortSignal.abort() }),
    );
    expect(error.code).toBe("aborted");
  });
});

describe("ScriptedProvider: streaming", () => {
  it("splits text into chunkSize pieces and ends with the response", async () => {
    const provider = new ScriptedProvider([{ text: "abcdefghij" }], "scripted", { chunkSize: 4 });
    const deltas = await collect(provider.stream(ask("x")));
    expect(deltas.slice(0, -1)).toEqual([
      { type: "text", text: "abcd" },
      { type: "text", text: "efgh" },
      { type: "text", text: "ij" },
    ]);
    expect(deltas.at(-1)).toMatchObject({ type: "response", response: { content: "abcdefghij" } });
  });

  it("uses 8-character pieces by default", async () => {
    const deltas = await collect(new ScriptedProvider([{ text: "x".repeat(20) }]).stream(ask("x")));
    expect(
      deltas.filter((d) => d.type === "text").map((d) => (d.type === "text" ? d.text.length : 0)),
    ).toEqual([8, 8, 4]);
  });

  it("streams each tool call as id and name with the first half of the arguments, then the rest", async () => {
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: "a", arguments: { q: "abc" } }, { name: "b" }] },
    ]);
    const deltas = await collect(provider.stream(ask("x")));
    expect(deltas.slice(0, -1)).toEqual([
      { type: "tool_call", index: 0, id: "call_1", name: "a", arguments: '{"q":"' },
      { type: "tool_call", index: 0, arguments: 'abc"}' },
      { type: "tool_call", index: 1, id: "call_2", name: "b", arguments: "{" },
      { type: "tool_call", index: 1, arguments: "}" },
    ]);
  });

  it("folds its own deltas into the response, which DeltaAccumulator agrees with", async () => {
    const deltas = await collect(
      new ScriptedProvider([{ text: "Checking.", toolCalls: [{ name: "t", arguments: { n: 1 } }] }]).stream(
        ask("x"),
      ),
    );
    const acc = new DeltaAccumulator();
    for (const d of deltas) acc.add(d);
    const final = deltas.at(-1);
    expect(final?.type).toBe("response");
    if (final?.type !== "response") return;
    expect(acc.response({ model: final.response.model, usage: final.response.usage! })).toEqual(
      final.response,
    );
  });

  const turns: [string, ScriptedTurn][] = [
    ["text", { text: "Hello there, general." }],
    ["empty text", {}],
    [
      "tool calls",
      {
        toolCalls: [
          { name: "a", arguments: { x: [1, 2] } },
          { name: "b", arguments: "" },
        ],
      },
    ],
    ["text and tool calls", { text: "Let me look.", toolCalls: [{ name: "a" }] }],
    [
      "usage and finish reason",
      { text: "cut", finishReason: "length", usage: { promptTokens: 3, completionTokens: 2 } },
    ],
  ];

  it.each(turns)("ends a stream of %s with the response complete() gives", async (_label, turn) => {
    const viaComplete = await new ScriptedProvider([turn]).complete(ask("same"));
    const deltas = await collect(new ScriptedProvider([turn]).stream(ask("same")));
    expect(deltas.at(-1)).toEqual({ type: "response", response: viaComplete });
  });

  it("ends a stream of empty text with tool calls with the response complete() gives", async () => {
    const turn: ScriptedTurn = { text: "", toolCalls: [{ name: "a" }] };
    const viaComplete = await new ScriptedProvider([turn]).complete(ask("same"));
    const deltas = await collect(new ScriptedProvider([turn]).stream(ask("same")));
    expect(deltas.at(-1)).toEqual({ type: "response", response: viaComplete });
  });

  it("records stream requests and throws scripted errors from the stream", async () => {
    const provider = new ScriptedProvider([{ error: { code: "provider_unavailable" } }]);
    const error = await rejection(collect(provider.stream(ask("x"))));
    expect(error.code).toBe("provider_unavailable");
    expect(provider.requests).toEqual([ask("x")]);
  });
});
