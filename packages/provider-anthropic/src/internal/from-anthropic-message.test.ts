import { describe, expect, it } from "vitest";
import { fromAnthropicMessage, toUsage } from "./from-anthropic-message.js";

describe("toUsage", () => {
  it("adds cached input to the prompt and reports the cache read part", () => {
    expect(
      toUsage({
        input_tokens: 5,
        cache_read_input_tokens: 100,
        cache_creation_input_tokens: 20,
        output_tokens: 3,
      }),
    ).toEqual({ promptTokens: 125, completionTokens: 3, totalTokens: 128, cachedPromptTokens: 100 });
  });

  it("treats null and missing counts as zero and leaves unreported optional counts out", () => {
    expect(toUsage({ input_tokens: 2, cache_read_input_tokens: null, output_tokens: 1 })).toEqual({
      promptTokens: 2,
      completionTokens: 1,
      totalTokens: 3,
    });
    expect(toUsage(undefined)).toBeUndefined();
  });
});

describe("fromAnthropicMessage", () => {
  it("falls back to the requested model and gives empty text for an empty reply", () => {
    expect(fromAnthropicMessage({ content: [], stop_reason: "max_tokens" }, "asked-for", undefined)).toEqual({
      content: "",
      toolCalls: [],
      finishReason: "length",
      model: "asked-for",
    });
  });

  it("keeps tool_calls as the finish reason when the schema tool comes with other calls", () => {
    const response = fromAnthropicMessage(
      {
        content: [
          { type: "tool_use", id: "a", name: "answer", input: { x: 1 } },
          { type: "tool_use", id: "b", name: "search", input: { q: "y" } },
        ],
        stop_reason: "tool_use",
      },
      "m",
      "answer",
    );
    expect(response.content).toBe('{"x":1}');
    expect(response.finishReason).toBe("tool_calls");
    expect(response.toolCalls.map((c) => c.function.name)).toEqual(["search"]);
  });
});
