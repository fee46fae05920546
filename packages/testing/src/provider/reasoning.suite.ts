import { type Message, type ReasoningItem, Session } from "@openrath/core";
import { expect } from "vitest";
import type { WireTurn } from "./fixture.js";
import { collect, finalResponse } from "./internal/collect.js";
import { defineGroup } from "./internal/define-group.js";
import { question, twoCalls } from "./responses.suite.js";
import type { ProviderSuiteContext } from "./suite-context.js";

const thought = "Two cities, so two calls to get_weather.";
const reasoned: WireTurn = { ...twoCalls, reasoning: thought };

/**
 * Reasoning items (for providers that claim them): a turn with reasoning comes back with items
 * tagged with the provider's name, whose text shows the reasoning and whose data survives a
 * session's JSON round trip; a stream gives the same items; the items go back with the assistant
 * turn of the next request, and items another provider wrote do not.
 */
export function reasoningSuite(context: ProviderSuiteContext): void {
  defineGroup(context, "reasoning", (group) => {
    const titles = [
      "returns reasoning items tagged with the provider's name, with readable text",
      "a stream ends with the same reasoning items complete gives",
      "sends its reasoning items back with the turn, also after a session's JSON round trip",
      "does not send reasoning items another provider wrote",
    ];
    if (!context.capabilities.reasoning) {
      for (const title of titles) group.skip(title, "capabilities.reasoning is not claimed");
      return;
    }

    group.test(titles[0]!, async () => {
      const { fixture, provider } = await group.open();
      fixture.enqueue({ type: "reply", turn: reasoned });
      const response = await provider.complete(question);
      const items = response.reasoning ?? [];
      expect(items.length, "reasoning items").toBeGreaterThan(0);
      expect(
        items.every((item) => item.provider === provider.name),
        "every item names the provider",
      ).toBe(true);
      expect(items.map((item) => item.text ?? "").join("\n")).toContain(thought);
      expect(response.toolCalls).toHaveLength(2);
    });

    if (context.capabilities.streaming) {
      group.test(titles[1]!, async () => {
        const { fixture, provider } = await group.open();
        fixture.enqueue({ type: "reply", turn: reasoned }, { type: "stream", turn: reasoned });
        const completed = await provider.complete(question);
        const streamed = finalResponse(await collect(provider.stream!(question)));
        expect(streamed.reasoning).toEqual(completed.reasoning);
      });
    } else {
      group.skip(titles[1]!, "the provider has no stream()");
    }

    group.test(titles[2]!, async () => {
      const { fixture, provider } = await group.open();
      fixture.enqueue({ type: "reply", turn: reasoned }, { type: "reply", turn: { text: ["Done."] } });
      const first = await provider.complete(question);
      // The items go through a session the way an agent keeps them: on the assistant chunk.
      const session = Session.fromMessages([
        ...question.messages,
        {
          role: "assistant",
          content: first.content,
          tool_calls: [...first.toolCalls],
          reasoning: [...(first.reasoning ?? [])],
        },
        ...first.toolCalls.map(
          (call): Message => ({ role: "tool", tool_call_id: call.id, content: '{"ok":true}' }),
        ),
      ]);
      const restored = Session.fromJSON(JSON.parse(JSON.stringify(session.toJSON())));
      await provider.complete({ ...question, messages: restored.messages() });
      const assistant = fixture.requests()[1]?.messages.find((m) => m.role === "assistant");
      expect(assistant?.role === "assistant" && assistant.reasoning.join("\n")).toContain(thought);
    });

    group.test(titles[3]!, async () => {
      const { fixture, provider } = await group.open();
      fixture.enqueue({ type: "reply", turn: { text: ["ok"] } });
      const foreign: ReasoningItem = {
        provider: `not-${provider.name}`,
        type: "thinking",
        text: "Someone else's thoughts.",
        data: { type: "thinking", thinking: "Someone else's thoughts.", signature: "x" },
      };
      await provider.complete({
        messages: [
          { role: "user", content: "Hi" },
          { role: "assistant", content: "Hello", reasoning: [foreign] },
          { role: "user", content: "Again" },
        ],
      });
      const assistant = fixture.requests()[0]?.messages.find((m) => m.role === "assistant");
      expect(assistant).toEqual({ role: "assistant", text: "Hello", toolCalls: [], reasoning: [] });
      expect(JSON.stringify(fixture.requests()[0]?.body)).not.toContain("Someone else's thoughts.");
    });
  });
}
