import type { FinishReason, ProviderResponse, ToolCall, Usage } from "@openrath/core";

/** Id given to a legacy `function_call` (which has none), so a tool result can still answer it. */
export const LEGACY_FUNCTION_CALL_ID = "function_call";

/** The pieces of a reply, gathered from a complete body or folded from a stream. */
export interface ReplyParts {
  /** The text, with any refusal text appended. */
  readonly text: string;
  /** Whether the model refused (OpenAI's `refusal` field). */
  readonly refused: boolean;
  readonly toolCalls: readonly ToolCall[];
  /** The vendor's `finish_reason`, as sent. */
  readonly finishReason: string | null | undefined;
  readonly usage: Usage | undefined;
  readonly model: string;
}

function toFinishReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case "stop":
    case "length":
    case "tool_calls":
    case "content_filter":
      return reason;
    case "function_call":
      return "tool_calls";
    default:
      return "stop";
  }
}

/**
 * The one normalization `complete` and `stream` share, so both give the same response: finish
 * reasons mapped (`function_call` → `tool_calls`, unknown → `stop`; `stop` with tool calls →
 * `tool_calls`, as some OpenAI-compatible servers report it; a refusal → `content_filter`), and
 * content `null` only for a turn with tool calls and no text.
 */
export function finalResponse(parts: ReplyParts): ProviderResponse {
  let finishReason = toFinishReason(parts.finishReason);
  if (parts.refused) finishReason = "content_filter";
  else if (finishReason === "stop" && parts.toolCalls.length > 0) finishReason = "tool_calls";
  return {
    content: parts.text === "" && parts.toolCalls.length > 0 ? null : parts.text,
    toolCalls: parts.toolCalls,
    finishReason,
    model: parts.model,
    ...(parts.usage ? { usage: parts.usage } : {}),
  };
}
