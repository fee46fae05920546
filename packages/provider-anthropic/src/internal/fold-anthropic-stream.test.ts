import type { ProviderDelta, ProviderError } from "@openrath/core";
import { describe, expect, it } from "vitest";
import { foldAnthropicStream } from "./fold-anthropic-stream.js";
import { fromAnthropicMessage } from "./from-anthropic-message.js";

/** The deltas of `events`, then the response their folded message maps to. */
async function run(events: unknown[], schemaTool?: string): Promise<ProviderDelta[]> {
  async function* source() {
    yield* events;
  }
  const out: ProviderDelta[] = [];
  const fold = foldAnthropicStream(source(), "fallback-model", schemaTool);
  for (;;) {
    const step = await fold.next();
    if (step.done) {
      out.push({
        type: "response",
        response: fromAnthropicMessage(step.value, "fallback-model", schemaTool),
      });
      return out;
    }
    out.push(step.value);
  }
}

async function code(events: unknown[]): Promise<string> {
  try {
    await run(events);
  } catch (error) {
    return (error as ProviderError).code;
  }
  return "none";
}

const start = {
  type: "message_start",
  message: { model: "m", content: [], usage: { input_tokens: 3, output_tokens: 1 } },
};
const stop = [
  { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 8, input_tokens: 4 } },
  { type: "message_stop" },
];

describe("foldAnthropicStream", () => {
  it("takes the final usage from message_delta over message_start", async () => {
    const deltas = await run([start, ...stop]);
    expect(deltas.at(-1)).toMatchObject({
      type: "response",
      response: { model: "m", usage: { promptTokens: 4, completionTokens: 8, totalTokens: 12 } },
    });
  });

  it("passes on tool input that came whole with content_block_start", async () => {
    const deltas = await run([
      start,
      {
        type: "content_block_start",
        index: 0,
        content_block: { type: "tool_use", id: "t1", name: "f", input: { a: 1 } },
      },
      { type: "content_block_stop", index: 0 },
      ...stop,
    ]);
    expect(deltas.slice(0, 2)).toEqual([
      { type: "tool_call", index: 0, id: "t1", name: "f" },
      { type: "tool_call", index: 0, arguments: '{"a":1}' },
    ]);
    expect(deltas.at(-1)).toMatchObject({
      response: { toolCalls: [{ function: { arguments: '{"a":1}' } }] },
    });
  });

  it("fails with provider_stream on events out of order or tool input that is not JSON", async () => {
    expect(
      await code([{ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }]),
    ).toBe("provider_stream");
    expect(
      await code([
        start,
        { type: "content_block_delta", index: 3, delta: { type: "text_delta", text: "x" } },
      ]),
    ).toBe("provider_stream");
    expect(await code([start, { nope: true }])).toBe("provider_stream");
    expect(
      await code([
        start,
        {
          type: "content_block_start",
          index: 0,
          content_block: { type: "tool_use", id: "t", name: "f", input: {} },
        },
        {
          type: "content_block_delta",
          index: 0,
          delta: { type: "input_json_delta", partial_json: '{"a": ' },
        },
        { type: "content_block_stop", index: 0 },
        ...stop,
      ]),
    ).toBe("provider_stream");
    expect(await code([])).toBe("provider_stream");
    expect(await code([start])).toBe("provider_stream");
  });

  it("ignores events after message_stop", async () => {
    const deltas = await run([
      start,
      ...stop,
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "late" } },
    ]);
    expect(deltas).toHaveLength(1);
  });
});
