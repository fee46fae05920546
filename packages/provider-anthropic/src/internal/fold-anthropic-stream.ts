import { type ProviderDelta, ProviderError } from "@openrath/core";
import type { AnthropicBlockLike, AnthropicMessageLike } from "./from-anthropic-message.js";

/** A content block being streamed. */
interface OpenBlock {
  /** The block as it grows: `content_block_start`'s block with the deltas applied. */
  block: Record<string, unknown> & { type: string };
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
    `The Anthropic stream for model "${model}" ended before message_stop (cut off mid-way).`,
    { retryable: true, status: 200 },
  );
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** What a streamed message folds into: the message `complete` would have got, for the same mapping. */
export type FoldedMessage = AnthropicMessageLike & { readonly content: AnthropicBlockLike[] };

/**
 * Turns the raw events of a streamed Messages call into {@link ProviderDelta}s and returns the
 * whole message, rebuilt as the SDK's own `MessageStream` does, for the caller to map exactly as
 * `complete` maps a JSON reply (so both agree) or to continue a paused turn with.
 *
 * - `message_start` opens the message (model, input usage); `content_block_start` opens a block
 *   (a tool call's id and name are yielded at once); `text_delta` yields text; `input_json_delta`
 *   yields a tool call's arguments under the block's tool index (or text, for the
 *   structured-output tool); `thinking_delta` and `signature_delta` grow a `thinking` block
 *   (kept whole for the response's reasoning items, not yielded); `message_delta` sets the stop
 *   reason and the final usage; `message_stop` ends it. `ping` and unknown events are ignored.
 * - Argument deltas are the server's raw JSON pieces; the final response carries
 *   `JSON.stringify(input)`, as `complete` does, which may differ from their concatenation in
 *   whitespace only.
 * - `toolIndexOffset` numbers this message's tool calls after those of earlier segments of the
 *   same turn (a turn continued after `pause_turn`).
 * - Usage stays `undefined` when no event carried any.
 *
 * @throws ProviderError `provider_stream` for events out of order, a tool input that is not
 * JSON, or a stream that ends before `message_stop`.
 */
export async function* foldAnthropicStream(
  events: AsyncIterable<unknown>,
  fallbackModel: string,
  schemaTool: string | undefined,
  toolIndexOffset = 0,
): AsyncGenerator<ProviderDelta, FoldedMessage> {
  let model: string = fallbackModel;
  let started = false;
  let stopped = false;
  let stopReason: unknown = null;
  let usage: Record<string, unknown> | undefined;
  const blocks = new Map<number, OpenBlock>();
  let toolCount = toolIndexOffset;

  const mergeUsage = (next: unknown) => {
    if (!isObject(next)) return;
    const merged: Record<string, unknown> = usage ?? {};
    for (const [key, value] of Object.entries(next))
      if (value !== null && value !== undefined) merged[key] = value;
    usage = merged;
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
        usage = undefined;
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
          block: { ...block, type: block.type },
          json: "",
          sawJson: false,
          toolIndex: -1,
          isAnswer: false,
          closed: false,
        };
        blocks.set(index, open);
        if (block.type === "text") {
          open.block.text = typeof block.text === "string" ? block.text : "";
          if (open.block.text !== "") yield { type: "text", text: open.block.text as string };
        }
        if (block.type === "thinking") {
          open.block.thinking = typeof block.thinking === "string" ? block.thinking : "";
          open.block.signature = typeof block.signature === "string" ? block.signature : "";
        }
        if (block.type === "tool_use") {
          const id = typeof block.id === "string" ? block.id : "";
          const name = typeof block.name === "string" ? block.name : "";
          open.block.id = id;
          open.block.name = name;
          open.isAnswer = schemaTool !== undefined && name === schemaTool;
          if (!open.isAnswer) {
            open.toolIndex = toolCount++;
            yield { type: "tool_call", index: open.toolIndex, id, name };
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
          open.block.text = `${open.block.text ?? ""}${delta.text}`;
          if (delta.text !== "") yield { type: "text", text: delta.text };
        } else if (delta.type === "thinking_delta" && typeof delta.thinking === "string") {
          open.block.thinking = `${open.block.thinking ?? ""}${delta.thinking}`;
        } else if (delta.type === "signature_delta" && typeof delta.signature === "string") {
          open.block.signature = `${open.block.signature ?? ""}${delta.signature}`;
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
        if (open.block.type !== "tool_use") break;
        if (open.sawJson) {
          if (open.json.trim() === "") open.block.input = {};
          else {
            try {
              open.block.input = JSON.parse(open.json);
            } catch (cause) {
              throw new ProviderError(
                "provider_stream",
                `The Anthropic stream for model "${model}" sent tool input for "${String(open.block.name)}" that is not valid JSON: ${open.json.slice(0, 200)}`,
                { cause, retryable: false, status: 200 },
              );
            }
          }
        } else if (isObject(open.block.input) && Object.keys(open.block.input).length > 0) {
          // The whole input came with the block start; hand it on as one piece.
          const args = JSON.stringify(open.block.input);
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

  const content = [...blocks.entries()].sort(([a], [b]) => a - b).map(([, b]) => b.block);
  return { model, content, stop_reason: stopReason, ...(usage ? { usage } : {}) };
}
