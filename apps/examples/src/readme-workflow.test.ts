import { lineageGraph, Session } from "@openrath/core";
import { describe, expect, it } from "vitest";
import { ReadmeFlow, readmeScript, wordCount } from "./readme-workflow.js";

describe("the README workflow", () => {
  it("calls the zod-typed tool, answers from its result and compresses to one model-visible chunk", async () => {
    const provider = readmeScript();
    const flow = new ReadmeFlow(provider);
    await flow.assistant.remember("The reader likes answers that say how many words a sentence has.");
    const out = await flow.run(
      Session.fromUserMessage('How many words are in "OpenRath makes sessions the unit of work"?'),
    );
    // The tool really ran: the model's second request carries its result.
    const toolMessage = provider.requests[1]!.messages.find((m) => m.role === "tool");
    expect(JSON.parse(toolMessage!.content as string)).toEqual({ words: 7 });
    expect(out.messages()).toHaveLength(1);
    expect(lineageGraph(out).nodes.map((n) => `${n.op}:${n.operator}`)).toEqual([
      "leaf_user:Session.fromUserMessage",
      "memory:assistant.recall",
      "loop:assistant",
      "memory:assistant.commit",
      "compress:compressor",
      "workflow:readme-flow",
    ]);
    // The remembered preference was recalled into the model's first request, tagged untrusted.
    expect(JSON.stringify(provider.requests[0]!.messages)).toContain("how many words a sentence has");
    // The run was committed: the question and the answer are now memories of this agent.
    const recalled = await flow.assistant.recall("words OpenRath sessions unit", {
      scope: { user: "reader", agent: "assistant" },
    });
    expect(recalled.map((h) => h.entry.text)).toContain(
      'How many words are in "OpenRath makes sessions the unit of work"?',
    );
    await flow.assistant.close();
    // Compression carried the agent's usage: the total covers all three model calls.
    expect(provider.callCount).toBe(3);
    expect(out.usage.totalTokens).toBeGreaterThan(0);
    expect(out.usage.promptTokens).toBeGreaterThan(provider.requests[2]!.messages.length);
  });

  it("describes itself like a module tree", () => {
    expect(new ReadmeFlow(readmeScript()).describe()).toBe(
      [
        "ReadmeFlow(name=readme-flow",
        "  (assistant): Agent(name=assistant, provider=scripted:scripted, tools=[word_count])",
        "  (compressor): Compressor(name=compressor)",
        ")",
      ].join("\n"),
    );
  });

  it("rejects arguments that do not match the zod schema before the tool runs", async () => {
    expect(await wordCount.validate({ text: 3 })).toMatchObject({ ok: false });
    expect(wordCount.parameters).toMatchObject({
      type: "object",
      properties: { text: { type: "string" } },
      required: ["text"],
    });
  });
});
