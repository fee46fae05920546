import type { ProviderRequest, ProviderResponse } from "@openrath/core";
import { expect } from "vitest";
import type { WireTurn } from "./fixture.js";
import { defineGroup } from "./internal/define-group.js";
import { weatherTool } from "./request-mapping.suite.js";
import type { ProviderSuiteContext } from "./suite-context.js";

/** The request every response test sends. */
export const question: ProviderRequest = {
  messages: [{ role: "user", content: "What is the weather in Oslo and Bergen?" }],
  tools: [weatherTool],
};

/** A turn that only calls two tools, their arguments split into pieces. */
export const twoCalls: WireTurn = {
  model: "conformance-served-model",
  toolCalls: [
    { id: "call_oslo", name: "get_weather", arguments: ['{"ci', 'ty":"Os', 'lo"}'] },
    { id: "call_bergen", name: "get_weather", arguments: ['{"city":"Bergen",', '"days":2}'] },
  ],
  usage: { input: 31, output: 9 },
};

/** A text turn in three pieces. */
export const threePieces: WireTurn = {
  model: "conformance-served-model",
  text: ["Clear ", "in Oslo, ", "rain in Bergen."],
  usage: { input: 12, output: 8 },
};

/** Tool calls of `response` with their arguments parsed, for comparing across wire formats. */
export function parsedCalls(response: ProviderResponse) {
  return response.toolCalls.map((call) => {
    expect(call.type).toBe("function");
    let args: unknown;
    try {
      args = JSON.parse(call.function.arguments);
    } catch {
      expect.fail(
        `tool call ${call.id} has arguments that are not JSON: ${JSON.stringify(call.function.arguments)}`,
      );
    }
    return { id: call.id, name: call.function.name, arguments: args };
  });
}

/**
 * Responses of `complete`: text, tool calls with raw JSON arguments and `null` content, the
 * finish reasons, the model the server named, usage as reported and no usage when none was.
 */
export function responsesSuite(context: ProviderSuiteContext): void {
  defineGroup(context, "responses", (group) => {
    group.test("returns the text, finish reason stop, the model the server named and its usage", async () => {
      const { fixture, provider } = await group.open();
      fixture.enqueue({ type: "reply", turn: threePieces });
      const response = await provider.complete(question);
      expect(response).toMatchObject({
        content: "Clear in Oslo, rain in Bergen.",
        toolCalls: [],
        finishReason: "stop",
        model: "conformance-served-model",
      });
      expect(response.usage).toMatchObject({ promptTokens: 12, completionTokens: 8, totalTokens: 20 });
    });

    group.test("returns tool calls with ids, names and JSON arguments, content null", async () => {
      const { fixture, provider } = await group.open();
      fixture.enqueue({ type: "reply", turn: twoCalls });
      const response = await provider.complete(question);
      expect(response.content).toBeNull();
      expect(response.finishReason).toBe("tool_calls");
      expect(parsedCalls(response)).toEqual([
        { id: "call_oslo", name: "get_weather", arguments: { city: "Oslo" } },
        { id: "call_bergen", name: "get_weather", arguments: { city: "Bergen", days: 2 } },
      ]);
    });

    group.test("keeps the text that comes with tool calls", async () => {
      const { fixture, provider } = await group.open();
      fixture.enqueue({ type: "reply", turn: { ...twoCalls, text: ["Looking both up."] } });
      const response = await provider.complete(question);
      expect(response.content).toBe("Looking both up.");
      expect(response.toolCalls).toHaveLength(2);
    });

    group.test("reports a turn cut by the token limit as finish reason length", async () => {
      const { fixture, provider } = await group.open();
      fixture.enqueue({ type: "reply", turn: { text: ["Clear in"], finish: "length" } });
      const response = await provider.complete({ ...question, maxTokens: 3 });
      expect(response.finishReason).toBe("length");
      expect(response.content).toBe("Clear in");
    });

    group.test("reports no usage, rather than zero tokens, when the server reports none", async () => {
      const { fixture, provider } = await group.open();
      fixture.enqueue({ type: "reply", turn: { text: ["ok"], usage: null } });
      const response = await provider.complete(question);
      expect(response.usage, "usage the server did not report is unknown, not zero").toBeUndefined();
    });
  });
}
