import type { ProviderDelta } from "@openrath/core";
import { DeltaAccumulator } from "@openrath/core/backend";
import { expect } from "vitest";
import { collect, finalResponse } from "./internal/collect.js";
import { defineGroup } from "./internal/define-group.js";
import { parsedCalls, question, threePieces, twoCalls } from "./responses.suite.js";
import type { ProviderSuiteContext } from "./suite-context.js";

type ToolCallDelta = Extract<ProviderDelta, { type: "tool_call" }>;

/**
 * Streaming: text deltas as they arrive, tool-call deltas by index with each call's id once and
 * its name not repeated, one final `response` equal to what `complete` returns for the same
 * turn, usage in the final response, and no usage when the stream carries none.
 */
export function streamingSuite(context: ProviderSuiteContext): void {
  defineGroup(context, "streaming", (group) => {
    const titles = [
      "yields each text piece as a delta and ends with one response",
      "yields tool-call deltas by index: the id once, the name once, the arguments in pieces",
      "ends with the response complete gives for the same turn",
      "reports the usage the stream carries, and none when it carries none",
    ];
    if (!context.capabilities.streaming) {
      for (const title of titles) group.skip(title, "the provider has no stream()");
      return;
    }

    group.test(titles[0]!, async () => {
      const { fixture, provider } = await group.open();
      fixture.enqueue({ type: "stream", turn: threePieces });
      const deltas = await collect(provider.stream!(question));
      const text = deltas.filter((d) => d.type === "text").map((d) => d.text);
      expect(text, "text deltas, in order").toEqual(threePieces.text);
      const response = finalResponse(deltas);
      expect(response.content).toBe(text.join(""));
      expect(response.finishReason).toBe("stop");
    });

    group.test(titles[1]!, async () => {
      const { fixture, provider } = await group.open();
      fixture.enqueue({ type: "stream", turn: twoCalls });
      const deltas = await collect(provider.stream!(question));
      const calls = deltas.filter((d): d is ToolCallDelta => d.type === "tool_call");
      const byIndex = new Map<number, ToolCallDelta[]>();
      for (const delta of calls) {
        expect(Number.isInteger(delta.index) && delta.index >= 0, "a tool-call delta's index").toBe(true);
        byIndex.set(delta.index, [...(byIndex.get(delta.index) ?? []), delta]);
      }
      expect([...byIndex.keys()].length, "one index per call").toBe(2);
      const seen = [...byIndex.entries()]
        .sort(([a], [b]) => a - b)
        .map(([, pieces]) => ({
          ids: pieces.flatMap((p) => (p.id ? [p.id] : [])),
          name: pieces.map((p) => p.name ?? "").join(""),
          arguments: JSON.parse(pieces.map((p) => p.arguments ?? "").join("")) as unknown,
          idFirst: pieces[0]?.id !== undefined,
        }));
      expect(seen, "ids sent once and first, names not repeated, arguments complete").toEqual([
        { ids: ["call_oslo"], name: "get_weather", arguments: { city: "Oslo" }, idFirst: true },
        { ids: ["call_bergen"], name: "get_weather", arguments: { city: "Bergen", days: 2 }, idFirst: true },
      ]);
      const folded = new DeltaAccumulator();
      for (const delta of deltas) folded.add(delta);
      const response = finalResponse(deltas);
      expect(response.finishReason).toBe("tool_calls");
      expect(response.content).toBeNull();
      expect(
        parsedCalls(folded.response({ model: response.model })),
        "the deltas fold into the response",
      ).toEqual(parsedCalls(response));
    });

    group.test(titles[2]!, async () => {
      const { fixture, provider } = await group.open();
      const turns = [
        threePieces,
        twoCalls,
        { ...twoCalls, text: ["Both:"] },
        { text: ["cut"], finish: "length" as const },
      ];
      for (const turn of turns) {
        fixture.enqueue({ type: "reply", turn }, { type: "stream", turn });
        const completed = await provider.complete(question);
        const streamed = finalResponse(await collect(provider.stream!(question)));
        expect(streamed, `stream and complete of ${JSON.stringify(turn)}`).toEqual(completed);
      }
    });

    group.test(titles[3]!, async () => {
      const { fixture, provider } = await group.open();
      fixture.enqueue(
        { type: "stream", turn: { text: ["ok"], usage: { input: 21, output: 4 } } },
        { type: "stream", turn: { text: ["ok"], usage: null } },
      );
      const reported = finalResponse(await collect(provider.stream!(question)));
      expect(reported.usage).toMatchObject({ promptTokens: 21, completionTokens: 4, totalTokens: 25 });
      const missing = finalResponse(await collect(provider.stream!(question)));
      expect(missing.usage, "usage the stream did not carry is unknown, not zero").toBeUndefined();
    });
  });
}
