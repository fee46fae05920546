import type { Usage } from "@openrath/core";
import type { CompletionUsage } from "openai/resources/completions";

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;
}

/**
 * OpenRath usage from OpenAI's `usage` object: prompt, completion and total tokens, plus cached
 * prompt tokens (`prompt_tokens_details.cached_tokens`) and reasoning tokens
 * (`completion_tokens_details.reasoning_tokens`) when the server reports them. Counts that are
 * missing or not numbers (some OpenAI-compatible servers) read as 0 or stay absent.
 */
export function toUsage(usage: CompletionUsage | null | undefined): Usage | undefined {
  if (!usage || typeof usage !== "object") return undefined;
  const promptTokens = count(usage.prompt_tokens) ?? 0;
  const completionTokens = count(usage.completion_tokens) ?? 0;
  const out: { -readonly [K in keyof Usage]: Usage[K] } = {
    promptTokens,
    completionTokens,
    totalTokens: count(usage.total_tokens) ?? promptTokens + completionTokens,
  };
  const cached = count(usage.prompt_tokens_details?.cached_tokens);
  if (cached !== undefined) out.cachedPromptTokens = cached;
  const reasoning = count(usage.completion_tokens_details?.reasoning_tokens);
  if (reasoning !== undefined) out.reasoningTokens = reasoning;
  return out;
}
