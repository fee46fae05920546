import type { DecodedMessage, DecodedRequest, WireScript, WireTurn } from "@openrath/testing/provider";
import { errorReply, faultedStream, OPENAI_ERRORS } from "./conformance-shared.js";
import {
  responseBody,
  responseErrorEvent,
  responseEvents,
  type WireResponse,
} from "./openai-responses-wire.js";
import type { WireReply } from "./openai-wire-server.js";

function toSpec(turn: WireTurn): WireResponse {
  const usage = turn.usage === undefined ? { input: 10, output: 5 } : turn.usage;
  return {
    ...(turn.model !== undefined ? { model: turn.model } : {}),
    ...(turn.reasoning !== undefined
      ? { reasoning: { summary: [turn.reasoning], encryptedContent: `enc:${turn.reasoning.length}` } }
      : {}),
    ...(turn.text !== undefined && turn.text.length > 0 ? { content: turn.text } : {}),
    ...(turn.toolCalls !== undefined ? { toolCalls: turn.toolCalls } : {}),
    ...(turn.finish === "length" ? { incomplete: "max_output_tokens" as const } : {}),
    usage: usage === null ? null : { input_tokens: usage.input, output_tokens: usage.output },
  };
}

/** The Responses API reply for a neutral script. */
export function responsesReply(script: WireScript): WireReply {
  switch (script.type) {
    case "reply":
      return { type: "json", body: responseBody(toSpec(script.turn)) };
    case "error":
      return errorReply(script);
    case "hang":
      return { type: "hang" };
    case "stream": {
      const events = responseEvents(toSpec(script.turn));
      const fault = script.fault;
      if (fault === undefined) return { type: "stream", events, done: false };
      let at = events.findIndex((e) => "event" in e && e.event === "response.output_item.added");
      if (fault.afterText > 0) {
        let seen = 0;
        at =
          events.findIndex(
            (e) => "event" in e && e.event === "response.output_text.delta" && ++seen === fault.afterText,
          ) + 1;
      }
      return faultedStream(events, at, fault, (kind) =>
        responseErrorEvent(OPENAI_ERRORS[kind].code ?? "server_error", `conformance ${kind}`),
      );
    }
  }
}

function text(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((p) => (typeof p?.text === "string" ? p.text : typeof p?.refusal === "string" ? p.refusal : ""))
    .join("");
}

function summaries(item: Record<string, unknown>): string[] {
  return (Array.isArray(item.summary) ? item.summary : []).map((s: { text?: unknown }) =>
    String(s.text ?? ""),
  );
}

// biome-ignore lint/suspicious/noExplicitAny: decodes arbitrary recorded input items.
function decodeInput(input: any[]): { system: string[]; messages: DecodedMessage[] } {
  const system: string[] = [];
  const messages: DecodedMessage[] = [];
  // Reasoning, assistant messages and function calls in a row form one assistant turn.
  let turn:
    | { text: string; toolCalls: { id: string; name: string; arguments: unknown }[]; reasoning: string[] }
    | undefined;
  const flush = () => {
    if (turn) messages.push({ role: "assistant", ...turn });
    turn = undefined;
  };
  const open = () => {
    turn ??= { text: "", toolCalls: [], reasoning: [] };
    return turn;
  };
  for (const item of typeof input === "string" ? [{ role: "user", content: input }] : input) {
    const type = item.type ?? "message";
    if (type === "reasoning") open().reasoning.push(...summaries(item));
    else if (type === "function_call")
      open().toolCalls.push({ id: item.call_id, name: item.name, arguments: JSON.parse(item.arguments) });
    else if (type === "message" && item.role === "assistant") open().text += text(item.content);
    else {
      flush();
      if (type === "function_call_output")
        messages.push({ role: "tool", toolCallId: item.call_id, content: text(item.output) });
      else if (item.role === "system" || item.role === "developer") system.push(text(item.content));
      else if (item.role === "user") messages.push({ role: "user", text: text(item.content) });
    }
  }
  flush();
  return { system, messages };
}

/** A recorded `POST /v1/responses` body in neutral terms. */
// biome-ignore lint/suspicious/noExplicitAny: decodes an arbitrary recorded JSON body.
export function decodeResponsesRequest(body: any): DecodedRequest {
  const { system, messages } = decodeInput(body.input ?? []);
  if (typeof body.instructions === "string") system.unshift(body.instructions);
  const choice = body.tool_choice;
  return {
    stream: body.stream === true,
    model: body.model,
    system: system.length > 0 ? system.join("\n\n") : undefined,
    messages,
    tools: (body.tools ?? []).map((t: Record<string, unknown>) => ({
      name: t.name,
      ...(t.description !== undefined ? { description: t.description } : {}),
      parameters: t.parameters,
    })),
    toolChoice: typeof choice === "object" && choice !== null ? { name: choice.name } : choice,
    maxTokens: body.max_output_tokens,
    temperature: body.temperature,
    topP: body.top_p,
    stop: undefined,
    body,
  };
}
