import type { Usage } from "@openrath/core";
import type { CompletionUsage } from "openai/resources/completions";

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;
}

/**
 * OpenRath usage from OpenAI's `usage` object: prompt, completion and total tokens, plus cached
 * prompt tokens (`prompt_tokens_details.cached_tokens`) and reasoning tokens
 * (`completion_tokens_details.reasoning_tokens`) when the server reports them. A usage object
 * with no count at all is `undefined` (unreported, not zero); within a report, a missing or
 * non-numeric count (some OpenAI-compatible servers) reads as 0 or stays absent.
 */
export function toUsage(usage: CompletionUsage | null | undefined): Usage | undefined {
  if (!usage || typeof usage !== "object") return undefined;
  const prompt = count(usage.prompt_tokens);
  const completion = count(usage.completion_tokens);
  const total = count(usage.total_tokens);
  // `usage: {}` (or nothing countable) is no report at all: unknown, not zero tokens.
  if (prompt === undefined && completion === undefined && total === undefined) return undefined;
  const promptTokens = prompt ?? 0;
  const completionTokens = completion ?? 0;
  const out: { -readonly [K in keyof Usage]: Usage[K] } = {
    promptTokens,
    completionTokens,
    totalTokens: total ?? promptTokens + completionTokens,
  };
  const cached = count(usage.prompt_tokens_details?.cached_tokens);
  if (cached !== undefined) out.cachedPromptTokens = cached;
  const reasoning = count(usage.completion_tokens_details?.reasoning_tokens);
  if (reasoning !== undefined) out.reasoningTokens = reasoning;
  return out;
}
