import type { FinishReason, ProviderResponse, ReasoningItem, ToolCall, Usage } from "@openrath/core";
import { toReasoningItem } from "./thinking-blocks.js";

/** The fields of an Anthropic `Message` (or a streamed snapshot of one) that the mapping reads. */
export interface AnthropicMessageLike {
  readonly model?: unknown;
  readonly content: readonly AnthropicBlockLike[];
  readonly stop_reason?: unknown;
  readonly usage?: unknown;
}

/** A content block as far as the mapping is concerned: text, a tool call, or something else. */
export interface AnthropicBlockLike {
  readonly type: string;
  readonly text?: unknown;
  readonly id?: unknown;
  readonly name?: unknown;
  readonly input?: unknown;
  /** A `thinking` block's text. */
  readonly thinking?: unknown;
  /** A `thinking` block's signature. */
  readonly signature?: unknown;
  /** A `redacted_thinking` block's encrypted data. */
  readonly data?: unknown;
}

/**
 * Maps an Anthropic stop reason to a {@link FinishReason}: `end_turn` and `stop_sequence` are
 * `stop`, `max_tokens` and `model_context_window_exceeded` are `length` (both mean the model ran
 * out of room), and so is `pause_turn` (which reaches the mapping only for a turn still paused
 * after the provider's last continuation: it did not finish); `tool_use` is `tool_calls`,
 * `refusal` is `content_filter`; anything else (a reason added later, none) is `stop`.
 */
export function toFinishReason(stopReason: unknown): FinishReason {
  switch (stopReason) {
    case "max_tokens":
    case "model_context_window_exceeded":
    case "pause_turn":
      return "length";
    case "tool_use":
      return "tool_calls";
    case "refusal":
      return "content_filter";
    default:
      return "stop";
  }
}

const count = (value: unknown): number =>
  typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;

/**
 * Maps Anthropic usage to {@link Usage}. Anthropic counts cached input apart from `input_tokens`,
 * so `promptTokens` adds `cache_read_input_tokens` and `cache_creation_input_tokens` back in;
 * `cachedPromptTokens` is the part read from the cache; `reasoningTokens` comes from
 * `output_tokens_details.thinking_tokens` when reported. `undefined` when there is no usage or it
 * has neither `input_tokens` nor `output_tokens`.
 */
export function toUsage(usage: unknown): Usage | undefined {
  if (typeof usage !== "object" || usage === null) return undefined;
  const u = usage as Record<string, unknown>;
  // Nothing countable (a stream whose events carried no usage) is no report: unknown, not zero.
  if (typeof u.input_tokens !== "number" && typeof u.output_tokens !== "number") return undefined;
  const promptTokens =
    count(u.input_tokens) + count(u.cache_read_input_tokens) + count(u.cache_creation_input_tokens);
  const completionTokens = count(u.output_tokens);
  const out: { -readonly [K in keyof Usage]: Usage[K] } = {
    promptTokens,
    completionTokens,
    totalTokens: promptTokens + completionTokens,
  };
  if (typeof u.cache_read_input_tokens === "number")
    out.cachedPromptTokens = count(u.cache_read_input_tokens);
  const details = u.output_tokens_details as Record<string, unknown> | null | undefined;
  if (typeof details?.thinking_tokens === "number") out.reasoningTokens = count(details.thinking_tokens);
  return out;
}

/**
 * Maps an Anthropic message to a {@link ProviderResponse}: text blocks concatenated into `content`
 * (`null` when the turn only calls tools), `tool_use` blocks to tool calls whose `arguments` are
 * `JSON.stringify(input)`, the stop reason through {@link toFinishReason}, usage through
 * {@link toUsage}. `thinking` and `redacted_thinking` blocks become `reasoning` items (kept, so the
 * next request of a tool loop can send them back, which the API requires); other blocks (server
 * tools) are not part of the normalized response.
 *
 * A `tool_use` of `schemaTool` is structured output, not a call: its input's JSON joins `content`
 * and, when it is the only call, the finish reason is `stop`.
 */
export function fromAnthropicMessage(
  message: AnthropicMessageLike,
  fallbackModel: string,
  schemaTool: string | undefined,
): ProviderResponse {
  let text = "";
  let answered = false;
  const toolCalls: ToolCall[] = [];
  const reasoning: ReasoningItem[] = [];
  for (const block of message.content) {
    const item = toReasoningItem(block as AnthropicBlockLike & Record<string, unknown>);
    if (item !== undefined) reasoning.push(item);
    else if (block.type === "text" && typeof block.text === "string") {
      text += block.text;
    } else if (block.type === "tool_use") {
      const name = typeof block.name === "string" ? block.name : "";
      const args = JSON.stringify(block.input ?? {});
      if (schemaTool !== undefined && name === schemaTool) {
        text += args;
        answered = true;
      } else {
        toolCalls.push({
          id: typeof block.id === "string" ? block.id : "",
          type: "function",
          function: { name, arguments: args },
        });
      }
    }
  }
  let finishReason = toFinishReason(message.stop_reason);
  if (answered && toolCalls.length === 0 && finishReason === "tool_calls") finishReason = "stop";
  const usage = toUsage(message.usage);
  return {
    content: text === "" && toolCalls.length > 0 ? null : text,
    toolCalls,
    finishReason,
    model: typeof message.model === "string" && message.model !== "" ? message.model : fallbackModel,
    ...(usage ? { usage } : {}),
    ...(reasoning.length > 0 ? { reasoning } : {}),
  };
}
