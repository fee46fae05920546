import type { RedactedThinkingBlockParam, ThinkingBlockParam } from "@anthropic-ai/sdk/resources/messages";
import type { JsonValue, ReasoningItem } from "@openrath/core";

/** The `provider` tag of the reasoning items this package writes, and the only ones it sends back. */
export const REASONING_PROVIDER = "anthropic";

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The reasoning item that keeps an Anthropic `thinking` or `redacted_thinking` block, or
 * `undefined` for any other block. `data` is the block exactly as the API sent it (the API checks
 * its `signature` against the thinking text when it comes back); `text` is the thinking text
 * again, for display (a redacted block has none).
 */
export function toReasoningItem(
  block: { readonly type: string } & Record<string, unknown>,
): ReasoningItem | undefined {
  if (block.type === "thinking" && typeof block.thinking === "string") {
    const data: Record<string, JsonValue> = {
      type: "thinking",
      thinking: block.thinking,
      signature: typeof block.signature === "string" ? block.signature : "",
    };
    return { provider: REASONING_PROVIDER, type: "thinking", text: block.thinking, data };
  }
  if (block.type === "redacted_thinking" && typeof block.data === "string") {
    return {
      provider: REASONING_PROVIDER,
      type: "redacted_thinking",
      data: { type: "redacted_thinking", data: block.data },
    };
  }
  return undefined;
}

/**
 * The `thinking` and `redacted_thinking` blocks to send back for an assistant turn's reasoning
 * items, in their order. Items another provider wrote, and items whose data is not such a block,
 * are skipped: they mean nothing to Anthropic.
 */
export function fromReasoningItems(
  items: readonly ReasoningItem[] | undefined,
): (ThinkingBlockParam | RedactedThinkingBlockParam)[] {
  const blocks: (ThinkingBlockParam | RedactedThinkingBlockParam)[] = [];
  for (const item of items ?? []) {
    if (item.provider !== REASONING_PROVIDER || !isObject(item.data)) continue;
    const data = item.data;
    if (data.type === "thinking" && typeof data.thinking === "string" && typeof data.signature === "string") {
      blocks.push({ type: "thinking", thinking: data.thinking, signature: data.signature });
    } else if (data.type === "redacted_thinking" && typeof data.data === "string") {
      blocks.push({ type: "redacted_thinking", data: data.data });
    }
  }
  return blocks;
}
