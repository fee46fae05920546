import { describe, expect, it } from "vitest";
import { chunkToMessage, createChunk, type ReasoningItem } from "./chunk.js";
import { OpenRathError } from "./errors.js";
import { Session } from "./session.js";

const thinking: ReasoningItem = {
  provider: "anthropic",
  type: "thinking",
  text: "Check the weather first.",
  data: { type: "thinking", thinking: "Check the weather first.", signature: "sig==" },
};

const call = { id: "call_1", type: "function" as const, function: { name: "weather", arguments: "{}" } };

describe("assistant reasoning items", () => {
  it("are kept, frozen, on the chunk and in its model-facing message", () => {
    const chunk = createChunk(
      { kind: "assistant", content: null, toolCalls: [call], reasoning: [thinking] },
      "s1",
    );
    expect(chunk.kind === "assistant" && chunk.reasoning).toEqual([thinking]);
    expect(Object.isFrozen((chunk as unknown as { reasoning: ReasoningItem[] }).reasoning[0]!.data)).toBe(
      true,
    );
    expect(chunkToMessage(chunk)).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [call],
      reasoning: [thinking],
    });
  });

  it("leave messages without reasoning unchanged", () => {
    const chunk = createChunk({ kind: "assistant", content: "hi" }, "s1");
    expect(chunkToMessage(chunk)).toEqual({ role: "assistant", content: "hi" });
  });

  it("survive fromMessages and a JSON round trip", () => {
    const session = Session.fromMessages([
      { role: "user", content: "Weather?" },
      { role: "assistant", content: null, tool_calls: [call], reasoning: [thinking] },
    ]);
    const back = Session.fromJSON(JSON.parse(JSON.stringify(session.toJSON())));
    expect(back.messages()[1]).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [call],
      reasoning: [thinking],
    });
  });

  it("reject items without a provider or with data JSON cannot hold", () => {
    for (const reasoning of [
      [{ type: "thinking", data: {} }],
      [{ provider: "", type: "thinking", data: {} }],
      [{ provider: "anthropic", type: "thinking" }],
      [{ provider: "anthropic", type: "thinking", data: { n: Number.NaN } }],
      "thinking",
    ]) {
      try {
        createChunk({ kind: "assistant", content: "x", reasoning } as never, "s1");
        expect.unreachable();
      } catch (error) {
        expect(OpenRathError.isInstance(error, "invalid_chunk")).toBe(true);
      }
    }
  });
});
