import {
  type AssistantChunk,
  CHUNK_KINDS,
  type ChunkInput,
  createChunk,
  OpenRathError,
  type ToolCall,
} from "@openrath/core";
import { chunkToMessage } from "@openrath/core/backend";
import { describe, expect, it } from "vitest";

const SESSION = "0190a000-0000-7000-8000-000000000001";
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const call = (id: string, name = "search", args = '{"q":"kyoto"}'): ToolCall => ({
  id,
  type: "function",
  function: { name, arguments: args },
});

/** The OpenRathError `fn` throws (failing the test if it throws anything else or nothing). */
function thrown(fn: () => unknown): OpenRathError {
  try {
    fn();
  } catch (error) {
    if (OpenRathError.isInstance(error)) return error;
    throw error;
  }
  return expect.fail("expected an OpenRathError");
}

const invalid = (input: unknown) => thrown(() => createChunk(input as ChunkInput, SESSION));

describe("CHUNK_KINDS", () => {
  it("lists the five kinds in a stable order and cannot be changed", () => {
    expect(CHUNK_KINDS).toEqual(["system", "user", "assistant", "tool_result", "event"]);
    expect(Object.isFrozen(CHUNK_KINDS)).toBe(true);
  });
});

describe("createChunk", () => {
  it("stamps a UUID v7 id, the given time and the session, and freezes the chunk", () => {
    const chunk = createChunk({ kind: "user", content: "hi" }, SESSION, 1234);
    expect(chunk).toEqual({
      kind: "user",
      content: "hi",
      id: expect.stringMatching(UUID_V7),
      createdAt: 1234,
      sessionId: SESSION,
    });
    expect(Object.isFrozen(chunk)).toBe(true);
  });

  it("keeps an id, time and session the input already has", () => {
    const input = { kind: "system" as const, content: "s", id: "kept", createdAt: 5, sessionId: "other" };
    const chunk = createChunk(input, SESSION, 99);
    expect(chunk).toMatchObject({ id: "kept", createdAt: 5, sessionId: "other" });
    expect(chunk).not.toBe(input);
    expect(Object.isFrozen(chunk)).toBe(true);
  });

  it("keeps the id, time and branch of an already-complete chunk", () => {
    const chunk = createChunk({ kind: "user", content: "x" }, SESSION);
    expect(createChunk(chunk, "another-session")).toEqual(chunk);
  });

  it("keeps only the fields its kind defines", () => {
    const input = {
      kind: "user",
      content: "x",
      toolCalls: [call("c")],
      name: "n",
      extra: 1,
    } as unknown as ChunkInput;
    const chunk = createChunk(input, SESSION, 5);
    expect(Object.keys(chunk).sort()).toEqual(["content", "createdAt", "id", "kind", "sessionId"]);
    const event = createChunk(
      { kind: "event", name: "e", content: "not an event field" } as unknown as ChunkInput,
      SESSION,
    );
    expect("content" in event).toBe(false);
  });

  it("does not modify the input object", () => {
    const input = { kind: "user" as const, content: "x" };
    createChunk(input, SESSION);
    expect(input).toEqual({ kind: "user", content: "x" });
    expect(Object.isFrozen(input)).toBe(false);
  });

  it("accepts every kind with its required fields", () => {
    const inputs: ChunkInput[] = [
      { kind: "system", content: "rules" },
      { kind: "user", content: "q", untrusted: true, source: "memory:1" },
      { kind: "assistant", content: "a" },
      { kind: "assistant", content: null, toolCalls: [call("c1")] },
      { kind: "assistant", content: "both", toolCalls: [call("c1")], model: "m", finishReason: "tool_calls" },
      { kind: "tool_result", toolCallId: "c1", name: "search", content: "{}", isError: false },
      { kind: "event", name: "memory.recall", data: { hits: [1, 2] } },
      {
        kind: "assistant",
        content: "u",
        usage: {
          promptTokens: 1,
          completionTokens: 2,
          totalTokens: 3,
          cachedPromptTokens: 0,
          reasoningTokens: 1,
        },
      },
    ];
    for (const input of inputs) expect(createChunk(input, SESSION)).toMatchObject(input);
  });

  it("rejects a non-object", () => {
    expect(invalid(null).code).toBe("invalid_chunk");
    expect(invalid("user").code).toBe("invalid_chunk");
  });

  it("rejects an unknown kind with a message listing the valid kinds", () => {
    const error = invalid({ kind: "tool", content: "x" });
    expect(error.code).toBe("invalid_chunk");
    expect(error.message).toContain('"tool"');
    expect(error.message).toContain("system, user, assistant, tool_result, event");
    expect(error.details.value).toEqual({ kind: "tool", content: "x" });
    expect(invalid({ content: "no kind" }).message).toContain("valid kinds are");
  });

  it.each([
    ["system without content", { kind: "system" }, "system chunk needs string `content`"],
    ["user with numeric content", { kind: "user", content: 5 }, "user chunk needs string `content`"],
    ["assistant without content", { kind: "assistant" }, "string or null"],
    [
      "assistant with null content and no tool calls",
      { kind: "assistant", content: null },
      "text content, tool calls, or both",
    ],
    [
      "assistant with null content and empty tool calls",
      { kind: "assistant", content: null, toolCalls: [] },
      "text content, tool calls, or both",
    ],
    [
      "assistant with tool calls that are not an array",
      { kind: "assistant", content: "x", toolCalls: call("c") },
      "toolCalls",
    ],
    [
      "assistant with object tool arguments",
      {
        kind: "assistant",
        content: null,
        toolCalls: [{ ...call("c"), function: { name: "f", arguments: {} } }],
      },
      "string arguments",
    ],
    [
      "assistant with a tool call of another type",
      { kind: "assistant", content: null, toolCalls: [{ ...call("c"), type: "web" }] },
      "toolCalls",
    ],
    ["tool_result without toolCallId", { kind: "tool_result", name: "f", content: "{}" }, "toolCallId"],
    ["tool_result without name", { kind: "tool_result", toolCallId: "c", content: "{}" }, "`name`"],
    ["tool_result without content", { kind: "tool_result", toolCallId: "c", name: "f" }, "`content`"],
    ["event without name", { kind: "event", data: 1 }, "non-empty string `name`"],
    ["event with an empty name", { kind: "event", name: "" }, "non-empty string `name`"],
    ["an empty id", { kind: "user", content: "x", id: "" }, "`id`"],
    ["a numeric id", { kind: "user", content: "x", id: 7 }, "`id`"],
    ["a numeric author", { kind: "user", content: "x", author: 7 }, "`author`"],
    ["a numeric sessionId", { kind: "user", content: "x", sessionId: 7 }, "`sessionId`"],
    ["a string createdAt", { kind: "user", content: "x", createdAt: "2024" }, "`createdAt`"],
    [
      "an infinite createdAt",
      { kind: "user", content: "x", createdAt: Number.POSITIVE_INFINITY },
      "`createdAt`",
    ],
    [
      "usage missing totalTokens",
      { kind: "assistant", content: "x", usage: { promptTokens: 1, completionTokens: 1 } },
      "`usage`",
    ],
    [
      "negative usage",
      { kind: "assistant", content: "x", usage: { promptTokens: -1, completionTokens: 1, totalTokens: 0 } },
      "`usage`",
    ],
    [
      "negative cached tokens",
      {
        kind: "assistant",
        content: "x",
        usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2, cachedPromptTokens: -1 },
      },
      "`usage`",
    ],
  ])("rejects %s with code invalid_chunk naming the field", (_, input, fragment) => {
    const error = invalid(input);
    expect(error.code).toBe("invalid_chunk");
    expect(error.message).toContain(fragment);
  });

  const base = { promptTokens: 1, completionTokens: 1, totalTokens: 2 };
  it("rejects a NaN optional usage count", () => {
    const error = invalid({
      kind: "assistant",
      content: "x",
      usage: { ...base, cachedPromptTokens: Number.NaN },
    });
    expect(error.code).toBe("invalid_chunk");
  });
  it("rejects an infinite optional usage count", () => {
    const usage = { ...base, reasoningTokens: Number.POSITIVE_INFINITY };
    expect(invalid({ kind: "assistant", content: "x", usage }).code).toBe("invalid_chunk");
  });

  it("does not share nested tool calls or usage with the caller's input", () => {
    const toolCalls = [call("c1")];
    const usage = { promptTokens: 1, completionTokens: 1, totalTokens: 2 };
    const chunk = createChunk(
      { kind: "assistant", content: null, toolCalls, usage },
      SESSION,
    ) as AssistantChunk;
    toolCalls.push(call("c2"));
    (usage as { promptTokens: number }).promptTokens = 1000;
    expect(chunk.toolCalls).toHaveLength(1);
    expect(chunk.usage!.promptTokens).toBe(1);
  });
});

describe("chunkToMessage", () => {
  const make = (input: ChunkInput) => createChunk(input, SESSION);

  it("maps system, user and text-only assistant chunks to role and content only", () => {
    expect(chunkToMessage(make({ kind: "system", content: "s", author: "x" }))).toEqual({
      role: "system",
      content: "s",
    });
    expect(chunkToMessage(make({ kind: "user", content: "u", untrusted: true }))).toEqual({
      role: "user",
      content: "u",
    });
    const text = chunkToMessage(make({ kind: "assistant", content: "a", toolCalls: [], model: "m" }));
    expect(text).toStrictEqual({ role: "assistant", content: "a" });
  });

  it("gives tool_calls for an assistant chunk with calls, as copies in OpenAI shape", () => {
    const chunk = make({
      kind: "assistant",
      content: null,
      toolCalls: [call("c1"), call("c2", "fetch", "{}")],
    });
    const message = chunkToMessage(chunk);
    expect(message).toStrictEqual({
      role: "assistant",
      content: null,
      tool_calls: [call("c1"), call("c2", "fetch", "{}")],
    });
    const calls = (message as { tool_calls: ToolCall[] }).tool_calls;
    expect(calls[0]).not.toBe((chunk as AssistantChunk).toolCalls![0]);
  });

  it("maps a tool_result to role tool with its tool_call_id", () => {
    const message = chunkToMessage(
      make({ kind: "tool_result", toolCallId: "c1", name: "search", content: "[]" }),
    );
    expect(message).toStrictEqual({ role: "tool", content: "[]", tool_call_id: "c1" });
  });

  it("gives nothing for an event chunk", () => {
    expect(chunkToMessage(make({ kind: "event", name: "budget.exceeded" }))).toBeUndefined();
  });
});
