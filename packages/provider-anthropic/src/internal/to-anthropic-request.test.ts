import { ProviderError } from "@openrath/core";
import { describe, expect, it } from "vitest";
import {
  type RequestDefaults,
  toAnthropicMessages,
  toAnthropicRequest,
  toToolInput,
} from "./to-anthropic-request.js";

const defaults: RequestDefaults = { model: "claude-test-1", maxTokens: 4096, structuredOutput: "tool" };

describe("toToolInput", () => {
  it("parses JSON objects, treats empty text as no arguments and keeps anything else under _raw", () => {
    expect(toToolInput('{"a":[1,{"b":null}]}')).toEqual({ a: [1, { b: null }] });
    expect(toToolInput("")).toEqual({});
    expect(toToolInput("  \n")).toEqual({});
    expect(toToolInput('{"a": 1')).toEqual({ _raw: '{"a": 1' });
    expect(toToolInput("[1,2]")).toEqual({ _raw: "[1,2]" });
    expect(toToolInput('"text"')).toEqual({ _raw: '"text"' });
    expect(toToolInput("null")).toEqual({ _raw: "null" });
  });
});

describe("toAnthropicMessages", () => {
  it("puts tool results first in a user turn that also has text", () => {
    const { messages } = toAnthropicMessages([
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "t", arguments: "{}" } }],
      },
      { role: "user", content: "also, hurry" },
      { role: "tool", tool_call_id: "c1", content: "done" },
    ]);
    expect(messages).toEqual([
      { role: "user", content: "go" },
      { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "t", input: {} }] },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "c1", content: "done" },
          { type: "text", text: "also, hurry" },
        ],
      },
    ]);
  });

  it("drops turns with nothing to send and merges the neighbours they separated", () => {
    const { system, messages } = toAnthropicMessages([
      { role: "user", content: "one" },
      { role: "assistant", content: null },
      { role: "assistant", content: "" },
      { role: "user", content: "" },
      { role: "user", content: "two" },
      { role: "system", content: "" },
    ]);
    expect(system).toBeUndefined();
    expect(messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "one" },
          { type: "text", text: "two" },
        ],
      },
    ]);
  });

  it("marks only results whose JSON says ok: false as errors", () => {
    const { messages } = toAnthropicMessages([
      { role: "tool", tool_call_id: "a", content: '{"ok":true}' },
      { role: "tool", tool_call_id: "b", content: "ok: false" },
      { role: "tool", tool_call_id: "c", content: "[false]" },
      { role: "tool", tool_call_id: "d", content: '{"ok":false}' },
    ]);
    const blocks = messages[0]?.content as { tool_use_id: string; is_error?: boolean }[];
    expect(blocks.map((b) => [b.tool_use_id, b.is_error ?? false])).toEqual([
      ["a", false],
      ["b", false],
      ["c", false],
      ["d", true],
    ]);
  });
});

describe("toAnthropicRequest", () => {
  it("gives every tool an object input schema and passes strict on", () => {
    const { body } = toAnthropicRequest(
      {
        messages: [{ role: "user", content: "x" }],
        tools: [{ type: "function", function: { name: "t", parameters: { properties: {} }, strict: true } }],
      },
      defaults,
    );
    expect(body.tools).toEqual([
      { name: "t", input_schema: { type: "object", properties: {} }, strict: true },
    ]);
  });

  it("forces the schema tool even when tools are switched off with toolChoice none", () => {
    const { body, schemaTool } = toAnthropicRequest(
      {
        messages: [{ role: "user", content: "x" }],
        tools: [{ type: "function", function: { name: "t", parameters: { type: "object" } } }],
        toolChoice: "none",
        responseFormat: { type: "json_schema", name: "answer", schema: { type: "object" } },
      },
      defaults,
    );
    expect(schemaTool).toBe("answer");
    expect(body.tool_choice).toEqual({ type: "tool", name: "answer" });
  });

  it("keeps a tool forced by name when a schema tool is added", () => {
    const { body } = toAnthropicRequest(
      {
        messages: [{ role: "user", content: "x" }],
        tools: [{ type: "function", function: { name: "t", parameters: { type: "object" } } }],
        toolChoice: { name: "t" },
        responseFormat: { type: "json_schema", name: "answer", schema: { type: "object" } },
      },
      defaults,
    );
    expect(body.tool_choice).toEqual({ type: "tool", name: "t" });
  });

  it("does not set a schema tool for text responses", () => {
    const plan = toAnthropicRequest(
      { messages: [{ role: "user", content: "x" }], responseFormat: { type: "text" } },
      defaults,
    );
    expect(plan.schemaTool).toBeUndefined();
    expect(plan.body).not.toHaveProperty("tools");
  });

  it("throws provider_bad_request when the schema name is taken by a tool", () => {
    expect(() =>
      toAnthropicRequest(
        {
          messages: [{ role: "user", content: "x" }],
          tools: [{ type: "function", function: { name: "json_object", parameters: { type: "object" } } }],
          responseFormat: { type: "json_object" },
        },
        defaults,
      ),
    ).toThrow(ProviderError);
  });
});
