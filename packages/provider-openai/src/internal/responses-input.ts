import type { JsonValue, Message, ReasoningItem, ToolCall } from "@openrath/core";

/** The `provider` tag of the reasoning items this package writes, and the only ones it reads. */
export const REASONING_PROVIDER = "openai";

/** The `type` of the one reasoning item a Responses turn with reasoning is kept as. */
export const OUTPUT_ITEM_TYPE = "responses.output";

/** A Responses API input item, as sent. */
export type InputItem = Record<string, unknown>;

const isObject = (value: unknown): value is Record<string, JsonValue> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The text of a message output item (its `output_text` and `refusal` parts). */
export function messageText(item: Record<string, unknown>): string {
  const parts = Array.isArray(item.content) ? item.content : [];
  return parts
    .map((p) =>
      isObject(p) && p.type === "output_text" && typeof p.text === "string"
        ? p.text
        : isObject(p) && p.type === "refusal" && typeof p.refusal === "string"
          ? p.refusal
          : "",
    )
    .join("");
}

function functionCall(call: ToolCall, id?: string): InputItem {
  return {
    type: "function_call",
    ...(id !== undefined ? { id } : {}),
    call_id: call.id,
    name: call.function.name,
    arguments: call.function.arguments,
  };
}

function assistantText(text: string): InputItem {
  return { type: "message", role: "assistant", content: text };
}

/**
 * The stored output of a Responses turn (see {@link OUTPUT_ITEM_TYPE}), or `undefined` when the
 * assistant message has none of ours, or when it cannot be sent back: without `store`, a
 * reasoning item the server cannot look up must carry its `encrypted_content`.
 */
function storedOutput(reasoning: readonly ReasoningItem[] | undefined, stateless: boolean) {
  const item = reasoning?.find((r) => r.provider === REASONING_PROVIDER && r.type === OUTPUT_ITEM_TYPE);
  if (item === undefined || !isObject(item.data) || !Array.isArray(item.data.output)) return undefined;
  const output = item.data.output.filter(isObject);
  if (stateless && output.some((o) => o.type === "reasoning" && typeof o.encrypted_content !== "string"))
    return undefined;
  return output;
}

/**
 * The input items of one assistant message. A turn that came from the Responses API with
 * reasoning goes back as it came out, item by item and with the item ids (the API links a
 * reasoning item to the message or function call that followed it, and rejects one without the
 * other): reasoning and hosted-tool items verbatim, messages verbatim when their text is still
 * the turn's text (else one message with the turn's text), function calls with the call's
 * current name and arguments. Anything else becomes a plain assistant message and function calls.
 */
function assistantItems(message: Extract<Message, { role: "assistant" }>, stateless: boolean): InputItem[] {
  const calls = message.tool_calls ?? [];
  const text = message.content ?? "";
  const output = storedOutput(message.reasoning, stateless);
  if (output === undefined) {
    return [...(text !== "" ? [assistantText(text)] : []), ...calls.map((call) => functionCall(call))];
  }
  const messages = output.filter((o) => o.type === "message");
  const textKept = messages.map(messageText).join("") === text;
  const byId = new Map(calls.map((call) => [call.id, call]));
  const items: InputItem[] = [];
  let textSent = false;
  for (const o of output) {
    if (o.type === "function_call") {
      const call = typeof o.call_id === "string" ? byId.get(o.call_id) : undefined;
      if (call === undefined) continue;
      byId.delete(call.id);
      items.push(functionCall(call, typeof o.id === "string" ? o.id : undefined));
    } else if (o.type === "message") {
      if (textKept) items.push(o);
      else if (!textSent && text !== "") items.push(assistantText(text));
      textSent = true;
    } else {
      items.push(o);
    }
  }
  if (!textSent && text !== "") items.push(assistantText(text));
  for (const call of byId.values()) items.push(functionCall(call));
  return items;
}

/**
 * The Responses API `input` for OpenAI-shaped messages: system and user messages as messages of
 * that role, assistant turns as in {@link assistantItems}, tool results as
 * `function_call_output` items. `stateless` (the body sets `store: false`) drops stored
 * reasoning the server could not look up.
 */
export function toInputItems(messages: readonly Message[], stateless: boolean): InputItem[] {
  const items: InputItem[] = [];
  for (const message of messages) {
    switch (message.role) {
      case "system":
      case "user":
        items.push({ type: "message", role: message.role, content: message.content });
        break;
      case "assistant":
        items.push(...assistantItems(message, stateless));
        break;
      case "tool":
        items.push({ type: "function_call_output", call_id: message.tool_call_id, output: message.content });
        break;
    }
  }
  return items;
}
