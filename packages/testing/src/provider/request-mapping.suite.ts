import type { ProviderRequest, ToolSpec } from "@openrath/core";
import { expect } from "vitest";
import { collect, providerFailure } from "./internal/collect.js";
import { defineGroup } from "./internal/define-group.js";
import type { ProviderSuiteContext } from "./suite-context.js";

/** The tool every mapping test offers. */
export const weatherTool: ToolSpec = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Current weather for a city.",
    parameters: {
      type: "object",
      properties: { city: { type: "string" }, days: { type: "integer" } },
      required: ["city"],
    },
  },
};

/** A transcript with every message kind: system, user, an assistant tool call and its result. */
export const toolLoop: ProviderRequest = {
  messages: [
    { role: "system", content: "You are terse." },
    { role: "user", content: "What is the weather in Oslo?" },
    {
      role: "assistant",
      content: "Let me look.",
      tool_calls: [
        { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } },
      ],
    },
    { role: "tool", tool_call_id: "call_1", content: '{"ok":true,"sky":"clear"}' },
  ],
  tools: [weatherTool],
};

const reply = { type: "reply" as const, turn: { text: ["ok"] } };

/**
 * Request mapping: the contract's descriptor fields, the transcript (system, user, assistant
 * text and tool calls, tool results) in order with ids kept, tools with their schema, every tool
 * choice, sampling options, the model override, and the stream flag.
 */
export function requestMappingSuite(context: ProviderSuiteContext): void {
  defineGroup(context, "request mapping", (group) => {
    group.test("the provider describes itself: specVersion v1, a name and a default model", async () => {
      const { provider } = await group.open();
      expect(provider.specVersion).toBe("v1");
      expect(typeof provider.name === "string" && provider.name !== "", "provider.name").toBe(true);
      expect(typeof provider.model === "string" && provider.model !== "", "provider.model").toBe(true);
      expect(typeof provider.complete).toBe("function");
      expect(typeof provider.stream === "function", "stream() exists as capabilities.streaming claims").toBe(
        context.capabilities.streaming,
      );
    });

    group.test("sends the system prompt and the transcript in order, tool call ids kept", async () => {
      const { fixture, provider } = await group.open();
      fixture.enqueue(reply);
      await provider.complete(toolLoop);
      const [sent] = fixture.requests();
      expect(sent?.system).toBe("You are terse.");
      expect(sent?.messages).toEqual([
        { role: "user", text: "What is the weather in Oslo?" },
        {
          role: "assistant",
          text: "Let me look.",
          toolCalls: [{ id: "call_1", name: "get_weather", arguments: { city: "Oslo" } }],
          reasoning: [],
        },
        { role: "tool", toolCallId: "call_1", content: '{"ok":true,"sky":"clear"}' },
      ]);
    });

    group.test("sends tools with their name, description and JSON Schema", async () => {
      const { fixture, provider } = await group.open();
      fixture.enqueue(reply);
      await provider.complete(toolLoop);
      expect(fixture.requests()[0]?.tools).toEqual([
        {
          name: "get_weather",
          description: "Current weather for a city.",
          parameters: weatherTool.function.parameters,
        },
      ]);
    });

    group.test("sends every tool choice: auto, none, required and a named tool", async () => {
      const { fixture, provider } = await group.open();
      const choices = ["auto", "none", "required", { name: "get_weather" }] as const;
      for (const toolChoice of choices) {
        fixture.enqueue(reply);
        await provider.complete({ ...toolLoop, toolChoice });
      }
      expect(fixture.requests().map((r) => r.toolChoice)).toEqual(choices);
    });

    group.test("sends temperature, topP and maxTokens", async () => {
      const { fixture, provider } = await group.open();
      fixture.enqueue(reply);
      await provider.complete({ ...toolLoop, temperature: 0.25, topP: 0.5, maxTokens: 77 });
      const sent = fixture.requests()[0];
      expect({ temperature: sent?.temperature, topP: sent?.topP, maxTokens: sent?.maxTokens }).toEqual({
        temperature: 0.25,
        topP: 0.5,
        maxTokens: 77,
      });
    });

    if (context.capabilities.stopSequences) {
      group.test("sends stop sequences", async () => {
        const { fixture, provider } = await group.open();
        fixture.enqueue(reply);
        await provider.complete({ ...toolLoop, stop: ["END", "STOP"] });
        expect(fixture.requests()[0]?.stop).toEqual(["END", "STOP"]);
      });
    } else {
      group.test(
        "refuses stop sequences it cannot send with provider_bad_request, sending nothing",
        async () => {
          const { fixture, provider } = await group.open();
          fixture.enqueue(reply);
          const error = await providerFailure(
            () => provider.complete({ ...toolLoop, stop: ["END"] }),
            "complete()",
          );
          expect(error.code).toBe("provider_bad_request");
          expect(fixture.requests()).toHaveLength(0);
        },
      );
    }

    group.test("uses its default model, and a request's model instead when given", async () => {
      const { fixture, provider } = await group.open();
      fixture.enqueue(reply, reply);
      await provider.complete(toolLoop);
      await provider.complete({ ...toolLoop, model: "conformance-override-model" });
      expect(fixture.requests().map((r) => r.model)).toEqual([provider.model, "conformance-override-model"]);
    });

    if (!context.capabilities.streaming) {
      group.skip("asks for a stream only from stream(), with the same request otherwise", "no stream()");
      return;
    }
    group.test("asks for a stream only from stream(), with the same request otherwise", async () => {
      const { fixture, provider } = await group.open();
      fixture.enqueue(reply, { type: "stream", turn: { text: ["ok"] } });
      await provider.complete(toolLoop);
      await collect(provider.stream!(toolLoop));
      const [complete, stream] = fixture.requests();
      expect([complete?.stream, stream?.stream]).toEqual([false, true]);
      const { stream: _a, body: _b, ...completeRest } = complete!;
      const { stream: _c, body: _d, ...streamRest } = stream!;
      expect(streamRest).toEqual(completeRest);
    });
  });
}
