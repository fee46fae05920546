import type { ContentBlockParam, MessageParam } from "@anthropic-ai/sdk/resources/messages";
import type { AnthropicMessageLike } from "./from-anthropic-message.js";
import type { AnthropicRequestBody } from "./to-anthropic-request.js";

/** One response of a turn: its content blocks, stop reason, usage and model as the API sent them. */
export type TurnSegment = AnthropicMessageLike;

/** Most continuations of one paused turn, by default. */
export const DEFAULT_MAX_PAUSE_CONTINUATIONS = 8;

/**
 * The body that continues a turn the API paused (`stop_reason: "pause_turn"`, a long-running
 * server tool such as web search): the original request with everything the turn produced so
 * far sent back as-is as the last assistant turn (merged into the request's own trailing
 * assistant turn, a prefill, when there is one), as Anthropic's documentation says to.
 */
export function continuationBody(
  body: AnthropicRequestBody,
  segments: readonly TurnSegment[],
): AnthropicRequestBody {
  const produced = segments.flatMap((s) => s.content) as unknown as ContentBlockParam[];
  const messages: MessageParam[] = [...body.messages];
  const last = messages.at(-1);
  if (last?.role === "assistant") {
    const prefill: ContentBlockParam[] =
      typeof last.content === "string"
        ? last.content === ""
          ? []
          : [{ type: "text", text: last.content }]
        : [...last.content];
    messages[messages.length - 1] = { role: "assistant", content: [...prefill, ...produced] };
  } else {
    messages.push({ role: "assistant", content: produced });
  }
  return { ...body, messages };
}

const USAGE_COUNTS = [
  "input_tokens",
  "output_tokens",
  "cache_read_input_tokens",
  "cache_creation_input_tokens",
] as const;

/**
 * One message for a turn made of several responses: their content in order, the last stop
 * reason and model, and their usage added up (each continuation is billed for its whole input
 * again, so the sum is what the turn cost). Usage stays absent when no segment reported any.
 */
export function joinSegments(segments: readonly TurnSegment[]): TurnSegment {
  if (segments.length === 1) return segments[0]!;
  const last = segments.at(-1)!;
  let usage: Record<string, unknown> | undefined;
  for (const segment of segments) {
    if (typeof segment.usage !== "object" || segment.usage === null) continue;
    const u = segment.usage as Record<string, unknown>;
    usage ??= {};
    for (const key of USAGE_COUNTS) {
      if (typeof u[key] === "number") usage[key] = ((usage[key] as number | undefined) ?? 0) + u[key];
    }
    const thinking = (u.output_tokens_details as Record<string, unknown> | null | undefined)?.thinking_tokens;
    if (typeof thinking === "number") {
      const details = (usage.output_tokens_details ?? {}) as Record<string, number>;
      usage.output_tokens_details = { thinking_tokens: (details.thinking_tokens ?? 0) + thinking };
    }
  }
  return {
    model: last.model,
    content: segments.flatMap((s) => s.content),
    stop_reason: last.stop_reason,
    ...(usage ? { usage } : {}),
  };
}
