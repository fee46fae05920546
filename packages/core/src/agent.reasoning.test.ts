import { describe, expect, it } from "vitest";
import { Agent } from "./agent.js";
import type { AssistantChunk, ReasoningItem } from "./chunk.js";
import type { ProviderRequest, ProviderResponse, ProviderV1 } from "./provider.js";
import { ReplayProvider } from "./replay-provider.js";
import { Session } from "./session.js";
import { defineTool } from "./tool.js";

const thinking: ReasoningItem = {
  provider: "thinker",
  type: "thinking",
  text: "Look it up first.",
  data: { type: "thinking", thinking: "Look it up first.", signature: "sig" },
};

/** A provider that thinks, calls `lookup`, then answers, recording every request it gets. */
function thinker(requests: ProviderRequest[]): ProviderV1 {
  const replies: ProviderResponse[] = [
    {
      content: null,
      toolCalls: [{ id: "c1", type: "function", function: { name: "lookup", arguments: "{}" } }],
      finishReason: "tool_calls",
      model: "thinker-1",
      reasoning: [thinking],
    },
    { content: "Found it.", toolCalls: [], finishReason: "stop", model: "thinker-1" },
  ];
  return {
    specVersion: "v1",
    name: "thinker",
    model: "thinker-1",
    complete: async (request) => {
      requests.push(request);
      const reply = replies.shift();
      if (!reply) throw new Error("no reply left");
      return reply;
    },
  };
}

const lookup = defineTool({ name: "lookup", description: "", parameters: {}, execute: () => ({ hit: 1 }) });

describe("reasoning items in the agent loop", () => {
  it("are kept on the assistant chunk and sent back with that turn on the next request", async () => {
    const requests: ProviderRequest[] = [];
    const agent = new Agent({ name: "a", provider: thinker(requests), tools: [lookup] });
    const out = await agent.run(Session.fromUserMessage("Find it."));
    const turn = out.chunks.find((c) => c.kind === "assistant") as AssistantChunk;
    expect(turn.reasoning).toEqual([thinking]);
    const sent = requests[1]!.messages.find((m) => m.role === "assistant");
    expect(sent).toMatchObject({ role: "assistant", reasoning: [thinking] });
  });

  it("come back from a replay, so the replayed transcript matches and the next request does too", async () => {
    const agent = new Agent({ name: "a", provider: thinker([]), tools: [lookup] });
    const recorded = await agent.run(Session.fromUserMessage("Find it."));
    const replayed = await new Agent({
      name: "a",
      provider: ReplayProvider.from(recorded),
      tools: [lookup],
    }).run(Session.fromUserMessage("Find it."));
    const kinds = (s: Session) =>
      s.chunks.filter((c) => c.kind === "assistant").map((c) => (c as AssistantChunk).reasoning);
    expect(kinds(replayed)).toEqual(kinds(recorded));
  });
});
