import { type ProviderDelta, ProviderError } from "@openrath/core";
import { type AnthropicBlockLike, fromAnthropicMessage } from "./from-anthropic-message.js";

/** A content block being streamed. */
interface OpenBlock {
  type: string;
  text: string;
  id?: string;
  name?: string;
  input?: unknown;
  /** Concatenated `input_json_delta` pieces of a `tool_use` block. */
  json: string;
  /** Whether any `input_json_delta` arrived. */
  sawJson: boolean;
  /** Position among the turn's tool calls (ProviderDelta `index`), for `tool_use` blocks. */
  toolIndex: number;
  /** A `tool_use` of the structured-output tool: its input streams as text. */
  isAnswer: boolean;
  closed: boolean;
}

function streamError(model: string, what: string): ProviderError {
  return new ProviderError(
    "provider_stream",
    `The Anthropic stream for model "${model}" ${what}. The server or a proxy in between is broken; retrying may help.`,
    { retryable: false, status: 200 },
  );
}

function cutError(model: string): ProviderError {
  return new ProviderError(
    "provider_stream",
    `The Anthropic stream for model "${model}" ended before message_stop (cut off mid-way). Retry the call.`,
    { retryable: true, status: 200 },
  );
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Turns the raw events of a streamed Messages call into {@link ProviderDelta}s and ends with the
 * `response` event. The response is built by rebuilding the whole message (as the SDK's own
 * `MessageStream` does) and mapping it exactly as `complete` maps a JSON reply, so both agree.
 *
 * - `message_start` opens the message (model, input usage); `content_block_start` opens a text or
 *   `tool_use` block (a tool call's id and name are yielded at once); `text_delta` yields text;
 *   `input_json_delta` yields a tool call's arguments under the block's tool index (or text, for
 *   the structured-output tool); `message_delta` sets the stop reason and the final usage;
 *   `message_stop` ends it. `ping` and unknown events are ignored.
 * - Argument deltas are the server's raw JSON pieces; the final response carries
 *   `JSON.stringify(input)`, as `complete` does, which may differ from their concatenation in
 *   whitespace only.
 *
 * @throws ProviderError `provider_stream` for events out of order, a tool input that is not
 * JSON, or a stream that ends before `message_stop`.
 */
export async function* foldAnthropicStream(
  events: AsyncIterable<unknown>,
  fallbackModel: string,
  schemaTool: string | undefined,
): AsyncGenerator<ProviderDelta> {
  let model: string = fallbackModel;
  let started = false;
  let stopped = false;
  let stopReason: unknown = null;
  let usage: Record<string, unknown> = {};
  const blocks = new Map<number, OpenBlock>();
  let toolCount = 0;

  const mergeUsage = (next: unknown) => {
    if (!isObject(next)) return;
    for (const [key, value] of Object.entries(next))
      if (value !== null && value !== undefined) usage[key] = value;
  };

  for await (const raw of events) {
    if (!isObject(raw) || typeof raw.type !== "string")
      throw streamError(model, "sent an event without a type");
    const event = raw;
    if (stopped) continue;
    if (!started && event.type !== "message_start" && event.type !== "ping") {
      throw streamError(model, `sent "${event.type}" before message_start`);
    }
    switch (event.type) {
      case "message_start": {
        const message = isObject(event.message) ? event.message : {};
        if (typeof message.model === "string" && message.model !== "") model = message.model;
        usage = {};
        mergeUsage(message.usage);
        started = true;
        break;
      }
      case "content_block_start": {
        const index = event.index;
        const block = isObject(event.content_block) ? event.content_block : undefined;
        if (typeof index !== "number" || block === undefined || typeof block.type !== "string") {
          throw streamError(model, "sent a content_block_start without an index or a block");
        }
        const open: OpenBlock = {
          type: block.type,
          text: typeof block.text === "string" ? block.text : "",
          json: "",
          sawJson: false,
          toolIndex: -1,
          isAnswer: false,
          closed: false,
        };
        blocks.set(index, open);
        if (block.type === "text" && open.text !== "") yield { type: "text", text: open.text };
        if (block.type === "tool_use") {
          open.id = typeof block.id === "string" ? block.id : "";
          open.name = typeof block.name === "string" ? block.name : "";
          open.input = block.input;
          open.isAnswer = schemaTool !== undefined && open.name === schemaTool;
          if (!open.isAnswer) {
            open.toolIndex = toolCount++;
            yield { type: "tool_call", index: open.toolIndex, id: open.id, name: open.name };
          }
        }
        break;
      }
      case "content_block_delta": {
        const open = typeof event.index === "number" ? blocks.get(event.index) : undefined;
        const delta = isObject(event.delta) ? event.delta : undefined;
        if (open === undefined || delta === undefined || open.closed) {
          throw streamError(
            model,
            `sent a content_block_delta for block ${String(event.index)}, which is not open`,
          );
        }
        if (delta.type === "text_delta" && typeof delta.text === "string") {
          open.text += delta.text;
          if (delta.text !== "") yield { type: "text", text: delta.text };
        } else if (delta.type === "input_json_delta" && typeof delta.partial_json === "string") {
          open.json += delta.partial_json;
          open.sawJson = true;
          if (delta.partial_json === "") break;
          if (open.isAnswer) yield { type: "text", text: delta.partial_json };
          else yield { type: "tool_call", index: open.toolIndex, arguments: delta.partial_json };
        }
        break;
      }
      case "content_block_stop": {
        const open = typeof event.index === "number" ? blocks.get(event.index) : undefined;
        if (open === undefined) {
          throw streamError(
            model,
            `sent a content_block_stop for block ${String(event.index)}, which is not open`,
          );
        }
        open.closed = true;
        if (open.type !== "tool_use") break;
        if (open.sawJson) {
          if (open.json.trim() === "") open.input = {};
          else {
            try {
              open.input = JSON.parse(open.json);
            } catch (cause) {
              throw new ProviderError(
                "provider_stream",
                `The Anthropic stream for model "${model}" sent tool input for "${open.name}" that is not valid JSON: ${open.json.slice(0, 200)}`,
                { cause, retryable: false, status: 200 },
              );
            }
          }
        } else if (isObject(open.input) && Object.keys(open.input).length > 0) {
          // The whole input came with the block start; hand it on as one piece.
          const args = JSON.stringify(open.input);
          if (open.isAnswer) yield { type: "text", text: args };
          else yield { type: "tool_call", index: open.toolIndex, arguments: args };
        }
        break;
      }
      case "message_delta": {
        const delta = isObject(event.delta) ? event.delta : {};
        if ("stop_reason" in delta) stopReason = delta.stop_reason;
        mergeUsage(event.usage);
        break;
      }
      case "message_stop":
        stopped = true;
        break;
      default:
        // `ping` and event types added later carry nothing the normalized response needs.
        break;
    }
  }

  if (!started || !stopped) throw cutError(model);

  const content: AnthropicBlockLike[] = [...blocks.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, b]) => ({ type: b.type, text: b.text, id: b.id, name: b.name, input: b.input }));
  yield {
    type: "response",
    response: fromAnthropicMessage(
      { model, content, stop_reason: stopReason, usage },
      fallbackModel,
      schemaTool,
    ),
  };
}
