import type { WireStreamEvent, WireToolCall } from "./openai-wire-server.js";

/** Token counts for {@link responseBody} and {@link responseEvents}, in the Responses API's names. */
export interface ResponsesWireUsage {
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly cached_tokens?: number;
  readonly reasoning_tokens?: number;
}

/** A reasoning output item to script: its summary parts and, optionally, its encrypted content. */
export interface WireReasoning {
  readonly id?: string;
  readonly summary: readonly string[];
  readonly encryptedContent?: string;
}

/** What to script in a Responses API reply. Output items come in this order: reasoning, message, calls. */
export interface WireResponse {
  readonly model?: string;
  readonly reasoning?: WireReasoning;
  /** Text pieces of the message; a body joins them. `undefined`: no message item. */
  readonly content?: readonly string[];
  /** A refusal instead of text. */
  readonly refusal?: string;
  readonly toolCalls?: readonly WireToolCall[];
  /** `incomplete` with this reason instead of `completed`. */
  readonly incomplete?: "max_output_tokens" | "content_filter";
  /** Usage to report; `null` leaves it out. Default `{ input_tokens: 10, output_tokens: 5 }`. */
  readonly usage?: ResponsesWireUsage | null;
}

const CREATED = 1_767_225_600;
const DEFAULT_MODEL = "gpt-5-mini-2025-08-07";

function usageBody(usage: ResponsesWireUsage) {
  return {
    input_tokens: usage.input_tokens,
    input_tokens_details: { cached_tokens: usage.cached_tokens ?? 0 },
    output_tokens: usage.output_tokens,
    output_tokens_details: { reasoning_tokens: usage.reasoning_tokens ?? 0 },
    total_tokens: usage.input_tokens + usage.output_tokens,
  };
}

function reasoningItem(spec: WireReasoning) {
  return {
    id: spec.id ?? "rs_wire0001",
    type: "reasoning",
    summary: spec.summary.map((text) => ({ type: "summary_text", text })),
    ...(spec.encryptedContent !== undefined ? { encrypted_content: spec.encryptedContent } : {}),
  };
}

function messageItem(spec: WireResponse, status: "in_progress" | "completed") {
  const part =
    spec.refusal !== undefined
      ? { type: "refusal", refusal: status === "completed" ? spec.refusal : "" }
      : {
          type: "output_text",
          annotations: [],
          logprobs: [],
          text: status === "completed" ? (spec.content ?? []).join("") : "",
        };
  return {
    id: "msg_wire0001",
    type: "message",
    status,
    content: status === "completed" ? [part] : [],
    role: "assistant",
  };
}

function callItem(call: WireToolCall, index: number, status: "in_progress" | "completed") {
  return {
    id: `fc_wire${String(index).padStart(4, "0")}`,
    type: "function_call",
    status,
    arguments: status === "completed" ? call.arguments.join("") : "",
    call_id: call.id,
    name: call.name,
  };
}

function outputOf(spec: WireResponse) {
  return [
    ...(spec.reasoning ? [reasoningItem(spec.reasoning)] : []),
    ...(spec.content !== undefined || spec.refusal !== undefined ? [messageItem(spec, "completed")] : []),
    ...(spec.toolCalls ?? []).map((call, i) => callItem(call, i, "completed")),
  ];
}

function envelope(spec: WireResponse, status: "in_progress" | "completed" | "incomplete") {
  const done = status !== "in_progress";
  return {
    id: "resp_wire0001",
    object: "response",
    created_at: CREATED,
    status,
    background: false,
    error: null,
    incomplete_details: status === "incomplete" ? { reason: spec.incomplete } : null,
    instructions: null,
    max_output_tokens: null,
    model: spec.model ?? DEFAULT_MODEL,
    output: done ? outputOf(spec) : [],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: spec.reasoning ? "medium" : null, summary: null },
    store: true,
    temperature: 1,
    text: { format: { type: "text" }, verbosity: "medium" },
    tool_choice: "auto",
    tools: [],
    top_p: 1,
    truncation: "disabled",
    usage:
      done && spec.usage !== null ? usageBody(spec.usage ?? { input_tokens: 10, output_tokens: 5 }) : null,
    user: null,
    metadata: {},
  };
}

/** A `response` object as `POST /v1/responses` returns it for a request without `stream`. */
export function responseBody(spec: WireResponse = {}) {
  const body = envelope(spec, spec.incomplete ? "incomplete" : "completed");
  if (spec.usage === null) delete (body as { usage?: unknown }).usage;
  return body;
}

/**
 * The events `POST /v1/responses` streams for `spec`, each with its `event:` line and a rising
 * `sequence_number`: `response.created`, `response.in_progress`, then per output item
 * `response.output_item.added` … `response.output_item.done` (a reasoning item's summary parts
 * with `response.reasoning_summary_part.added` / `…text.delta` / `…text.done` / `…part.done`; the
 * message's `response.content_part.added`, one `response.output_text.delta` per text piece (or
 * `response.refusal.delta`), `…output_text.done`, `…content_part.done`; a function call's
 * `response.function_call_arguments.delta` per argument piece and `…arguments.done`), and
 * `response.completed` (or `response.incomplete`) with the whole response. No `[DONE]` follows.
 */
export function responseEvents(spec: WireResponse = {}): WireStreamEvent[] {
  let sequence = 0;
  const events: WireStreamEvent[] = [];
  const push = (type: string, fields: Record<string, unknown>) =>
    events.push({ event: type, data: { type, ...fields, sequence_number: sequence++ } });
  push("response.created", { response: envelope(spec, "in_progress") });
  push("response.in_progress", { response: envelope(spec, "in_progress") });
  let output_index = 0;
  if (spec.reasoning) {
    const item = reasoningItem(spec.reasoning);
    push("response.output_item.added", { output_index, item: { ...item, summary: [] } });
    spec.reasoning.summary.forEach((text, summary_index) => {
      const base = { item_id: item.id, output_index, summary_index };
      push("response.reasoning_summary_part.added", { ...base, part: { type: "summary_text", text: "" } });
      push("response.reasoning_summary_text.delta", { ...base, delta: text });
      push("response.reasoning_summary_text.done", { ...base, text });
      push("response.reasoning_summary_part.done", { ...base, part: { type: "summary_text", text } });
    });
    push("response.output_item.done", { output_index, item });
    output_index++;
  }
  if (spec.content !== undefined || spec.refusal !== undefined) {
    const item = messageItem(spec, "completed");
    const base = { item_id: item.id, output_index, content_index: 0 };
    push("response.output_item.added", { output_index, item: messageItem(spec, "in_progress") });
    const empty =
      spec.refusal !== undefined
        ? { type: "refusal", refusal: "" }
        : { type: "output_text", annotations: [], logprobs: [], text: "" };
    push("response.content_part.added", { ...base, part: empty });
    if (spec.refusal !== undefined) {
      push("response.refusal.delta", { ...base, delta: spec.refusal });
      push("response.refusal.done", { ...base, refusal: spec.refusal });
    } else {
      for (const delta of spec.content ?? [])
        push("response.output_text.delta", { ...base, delta, logprobs: [] });
      push("response.output_text.done", { ...base, text: (spec.content ?? []).join(""), logprobs: [] });
    }
    push("response.content_part.done", { ...base, part: item.content[0] });
    push("response.output_item.done", { output_index, item });
    output_index++;
  }
  (spec.toolCalls ?? []).forEach((call, i) => {
    const item = callItem(call, i, "completed");
    push("response.output_item.added", { output_index, item: callItem(call, i, "in_progress") });
    for (const delta of call.arguments)
      push("response.function_call_arguments.delta", { item_id: item.id, output_index, delta });
    push("response.function_call_arguments.done", {
      item_id: item.id,
      output_index,
      arguments: item.arguments,
      name: call.name,
    });
    push("response.output_item.done", { output_index, item });
    output_index++;
  });
  const final = responseBody(spec);
  push(spec.incomplete ? "response.incomplete" : "response.completed", { response: final });
  return events;
}

/** The `error` event the Responses API sends inside a stream. */
export function responseErrorEvent(code: string, message: string): WireStreamEvent {
  return { event: "error", data: { type: "error", code, message, param: null, sequence_number: 999 } };
}
