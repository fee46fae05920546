import {
  type JsonValue,
  ProviderError,
  type ProviderResponse,
  type ReasoningItem,
  type ToolCall,
  type Usage,
} from "@openrath/core";
import { finalResponse } from "./final-response.js";
import { messageText, OUTPUT_ITEM_TYPE, REASONING_PROVIDER } from "./responses-input.js";

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;
}

/**
 * OpenRath usage from a Responses `usage` object: input, output and total tokens, cached input
 * (`input_tokens_details.cached_tokens`) and reasoning tokens
 * (`output_tokens_details.reasoning_tokens`). `undefined` when there is none or nothing in it counts.
 */
export function toResponsesUsage(usage: unknown): Usage | undefined {
  if (!isObject(usage)) return undefined;
  const input = count(usage.input_tokens);
  const output = count(usage.output_tokens);
  const total = count(usage.total_tokens);
  if (input === undefined && output === undefined && total === undefined) return undefined;
  const out: { -readonly [K in keyof Usage]: Usage[K] } = {
    promptTokens: input ?? 0,
    completionTokens: output ?? 0,
    totalTokens: total ?? (input ?? 0) + (output ?? 0),
  };
  const cached = count(
    (usage.input_tokens_details as Record<string, unknown> | null | undefined)?.cached_tokens,
  );
  if (cached !== undefined) out.cachedPromptTokens = cached;
  const reasoning = count(
    (usage.output_tokens_details as Record<string, unknown> | null | undefined)?.reasoning_tokens,
  );
  if (reasoning !== undefined) out.reasoningTokens = reasoning;
  return out;
}

/** The readable text of a reasoning output item: its summaries, else its reasoning text. */
function reasoningText(item: Record<string, unknown>): string {
  const parts = (list: unknown, type: string) =>
    (Array.isArray(list) ? list : [])
      .filter((p) => isObject(p) && p.type === type && typeof p.text === "string")
      .map((p) => (p as { text: string }).text);
  const summary = parts(item.summary, "summary_text");
  return (summary.length > 0 ? summary : parts(item.content, "reasoning_text")).join("\n\n");
}

/**
 * The one reasoning item that keeps a turn's output for the next request, when the output has
 * reasoning or hosted-tool items: every output item in order, reasoning and hosted-tool items and
 * messages verbatim, function calls as their ids (name and arguments live in the tool calls).
 * `undefined` for a turn of plain messages and function calls, which needs nothing kept.
 */
function outputItem(output: readonly Record<string, unknown>[]): ReasoningItem | undefined {
  if (output.every((o) => o.type === "message" || o.type === "function_call")) return undefined;
  const kept = output.map((o): JsonValue => {
    if (o.type !== "function_call") return o as JsonValue;
    return {
      type: "function_call",
      ...(typeof o.id === "string" ? { id: o.id } : {}),
      call_id: String(o.call_id),
    };
  });
  const text = output
    .filter((o) => o.type === "reasoning")
    .map(reasoningText)
    .filter((t) => t !== "")
    .join("\n\n");
  return {
    provider: REASONING_PROVIDER,
    type: OUTPUT_ITEM_TYPE,
    ...(text !== "" ? { text } : {}),
    data: { output: kept },
  };
}

/** The `ProviderError` for a `response.failed` response or an `error` event, by its code. */
export function responseFailure(
  error: { readonly code?: unknown; readonly message?: unknown },
  requested: string,
  started: boolean,
): ProviderError {
  const code = typeof error.code === "string" ? error.code : "";
  const message = typeof error.message === "string" ? error.message : "no message";
  const delivered = started ? " Part of the reply was already streamed, so it is not retried." : "";
  const opts = { details: { model: requested, code }, ...(started ? { retryable: false } : {}) };
  if (code.includes("rate_limit"))
    return new ProviderError(
      "provider_rate_limited",
      `Rate limited on model "${requested}": ${message}${delivered}`,
      opts,
    );
  if (code === "server_error" || code.includes("overloaded") || code.includes("unavailable"))
    return new ProviderError(
      "provider_unavailable",
      `The server failed on model "${requested}": ${message}${delivered || " Retry later."}`,
      opts,
    );
  return new ProviderError(
    "provider_response",
    `Model "${requested}" failed to answer (${code || "no code"}): ${message}`,
    { ...opts, retryable: false },
  );
}

/**
 * The normalized response for a Responses API `response` object: the text of its message items
 * (a refusal appended, with finish reason `content_filter`), its function calls (`call_id` as the
 * id), finish reason `length` for `incomplete` with `max_output_tokens` and `content_filter` for
 * `content_filter`, usage with cached and reasoning tokens, the model it names, and reasoning
 * items for the next request.
 *
 * @throws ProviderError for a `failed` response (by its error code), or `provider_response` for
 * a body that is not a response.
 */
export function fromResponse(response: unknown, requested: string): ProviderResponse {
  if (!isObject(response) || !Array.isArray(response.output)) {
    throw new ProviderError(
      "provider_response",
      `The server answered for model "${requested}" with something that is not a Responses API response (no output list). Check that the base URL serves /responses.`,
      { details: { model: requested, body: response as JsonValue } },
    );
  }
  if (response.status === "failed" && isObject(response.error))
    throw responseFailure(response.error, requested, false);
  const output = response.output.filter(isObject);
  const toolCalls: ToolCall[] = output
    .filter((o) => o.type === "function_call")
    .map((o) => ({
      id: String(o.call_id ?? o.id ?? ""),
      type: "function",
      function: { name: String(o.name ?? ""), arguments: typeof o.arguments === "string" ? o.arguments : "" },
    }));
  const messages = output.filter((o) => o.type === "message");
  const refused = messages.some(
    (m) => Array.isArray(m.content) && m.content.some((p) => isObject(p) && p.type === "refusal"),
  );
  const incomplete = isObject(response.incomplete_details) ? response.incomplete_details.reason : undefined;
  const finish =
    response.status === "incomplete"
      ? incomplete === "content_filter"
        ? "content_filter"
        : "length"
      : toolCalls.length > 0
        ? "tool_calls"
        : "stop";
  const reasoning = outputItem(output);
  const answered = typeof response.model === "string" && response.model !== "" ? response.model : requested;
  const normalized = finalResponse({
    text: messages.map(messageText).join(""),
    refused,
    toolCalls,
    finishReason: finish,
    usage: toResponsesUsage(response.usage),
    model: answered,
  });
  return reasoning ? { ...normalized, reasoning: [reasoning] } : normalized;
}
