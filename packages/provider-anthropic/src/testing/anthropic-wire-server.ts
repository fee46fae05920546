import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local stand-in for the Anthropic Messages API, for tests: it speaks `POST /v1/messages` the
 * way the real service does (JSON replies, Server-Sent Events with `event:`/`data:` lines, error
 * bodies `{"type":"error","error":{...}}`), so the official SDK runs against it unmodified. Replies
 * come from a scripted queue; every request is recorded. It listens on 127.0.0.1 only.
 */
export interface AnthropicWireServer {
  /** Base URL to hand to the SDK, such as `http://127.0.0.1:54321`. */
  readonly url: string;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Adds replies to the end of the queue; each request takes the next one. */
  enqueue(...replies: WireReply[]): void;
  /** Replies not yet taken. */
  pending(): number;
  /** Resolves when the client has closed the connection of request `index` (0-based). */
  clientClosed(index: number): Promise<void>;
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

/** One request as the server saw it. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The body parsed as JSON (or the raw text when it is not JSON). */
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary wire fields.
  readonly body: any;
  /** True once the client closed the connection before the reply was complete. */
  closedEarly: boolean;
}

/** One Server-Sent Event: a named JSON event, or raw text written as is (for malformed data). */
export type SseEvent = { readonly event: string; readonly data: unknown } | { readonly raw: string };

/** Fields every reply may have. */
interface ReplyBase {
  /** Wait this long before answering, in milliseconds. */
  readonly delayMs?: number;
  /** Extra response headers. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** A scripted reply. */
export type WireReply =
  | (ReplyBase & { readonly type: "json"; readonly status?: number; readonly body: unknown })
  | (ReplyBase & {
      readonly type: "error";
      readonly status: number;
      /** Anthropic error type, such as `rate_limit_error` or `overloaded_error`. */
      readonly errorType: string;
      readonly message: string;
    })
  | (ReplyBase & {
      readonly type: "stream";
      readonly events: readonly SseEvent[];
      /** Destroy the socket after writing this many events (a connection cut mid-stream). */
      readonly cutAfter?: number;
      /** End the response cleanly after this many events (a stream that stops early). */
      readonly endAfter?: number;
      /** After this many events, keep the connection open until the client closes it. */
      readonly holdAfter?: number;
      /** Pause between events, in milliseconds. */
      readonly eventDelayMs?: number;
      /** Write each event in two TCP writes, split mid-line. */
      readonly splitWrites?: boolean;
    })
  | (ReplyBase & { readonly type: "raw"; readonly status: number; readonly body: string })
  /** Accept the request and never answer, until the client closes the connection. */
  | (ReplyBase & { readonly type: "hang" });

/** An Anthropic `Message` as the API returns it (the fields tests set; the rest are filled in). */
export interface WireMessage {
  readonly id?: string;
  readonly model?: string;
  readonly content: readonly Record<string, unknown>[];
  readonly stop_reason?: string | null;
  readonly stop_sequence?: string | null;
  /** Usage fields over the defaults; `null` leaves usage out entirely (a server that reports none). */
  readonly usage?: Readonly<Record<string, unknown>> | null;
}

let counter = 0;
const nextId = (prefix: string) => `${prefix}_${(++counter).toString(36).padStart(8, "0")}`;

/** A full `Message` body with the service's default fields. */
export function wireMessage(message: WireMessage): Record<string, unknown> {
  return {
    id: message.id ?? nextId("msg"),
    type: "message",
    role: "assistant",
    model: message.model ?? "claude-test-1",
    content: message.content,
    stop_reason: message.stop_reason === undefined ? "end_turn" : message.stop_reason,
    stop_sequence: message.stop_sequence ?? null,
    ...(message.usage === null
      ? {}
      : {
          usage: {
            input_tokens: 10,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
            output_tokens: 5,
            service_tier: "standard",
            ...message.usage,
          },
        }),
  };
}

/** A JSON reply carrying `message`. */
export function messageReply(message: WireMessage, extra: ReplyBase = {}): WireReply {
  return { type: "json", body: wireMessage(message), ...extra };
}

/** How {@link streamEvents} slices a message into events. */
export interface StreamShape {
  /** Characters per `text_delta` (default 4). */
  readonly textChunk?: number;
  /** Characters per `input_json_delta` (default 5). */
  readonly jsonChunk?: number;
  /** Send a `ping` after `message_start`, as the service does (default true). */
  readonly ping?: boolean;
  /**
   * The exact delta pieces of content block `i` (its text, thinking text or tool-input JSON),
   * instead of slicing by `textChunk` / `jsonChunk`; a tool block's pieces must join to its input's JSON.
   */
  readonly pieces?: Readonly<Record<number, readonly string[]>>;
}

function slices(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/**
 * The event sequence the service streams for `message`: `message_start` (empty content, input
 * usage, `output_tokens: 1`), `ping`, per block `content_block_start` / deltas /
 * `content_block_stop` (tool input as `input_json_delta` pieces of its JSON, formatted with a
 * space after colons and commas as the service does; a `thinking` block as `thinking_delta`
 * pieces then one `signature_delta`; other blocks whole in their start event), `message_delta`
 * (stop reason, output usage) and `message_stop`.
 */
export function streamEvents(message: WireMessage, shape: StreamShape = {}): SseEvent[] {
  const full = wireMessage(message);
  const usage = full.usage as Record<string, unknown> | undefined;
  const events: SseEvent[] = [
    {
      event: "message_start",
      data: {
        type: "message_start",
        message: {
          ...full,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          ...(usage ? { usage: { ...usage, output_tokens: 1 } } : {}),
        },
      },
    },
  ];
  if (shape.ping ?? true) events.push({ event: "ping", data: { type: "ping" } });
  message.content.forEach((block, index) => {
    if (block.type === "text") {
      events.push({
        event: "content_block_start",
        data: { type: "content_block_start", index, content_block: { type: "text", text: "" } },
      });
      for (const text of shape.pieces?.[index] ?? slices(String(block.text ?? ""), shape.textChunk ?? 4)) {
        events.push({
          event: "content_block_delta",
          data: { type: "content_block_delta", index, delta: { type: "text_delta", text } },
        });
      }
    } else if (block.type === "tool_use") {
      events.push({
        event: "content_block_start",
        data: {
          type: "content_block_start",
          index,
          content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
        },
      });
      const json = JSON.stringify(block.input ?? {}, null, 1)
        .replace(/\n\s*/g, " ")
        .replace(/\{ /g, "{")
        .replace(/ \}/g, "}")
        .replace(/\[ /g, "[")
        .replace(/ \]/g, "]");
      const pieces = shape.pieces?.[index] ?? (json === "{}" ? [""] : slices(json, shape.jsonChunk ?? 5));
      for (const partial_json of pieces) {
        events.push({
          event: "content_block_delta",
          data: { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } },
        });
      }
    } else if (block.type === "thinking") {
      // The thinking text streams as thinking_delta pieces; the signature comes last, whole.
      events.push({
        event: "content_block_start",
        data: {
          type: "content_block_start",
          index,
          content_block: { type: "thinking", thinking: "", signature: "" },
        },
      });
      for (const thinking of shape.pieces?.[index] ??
        slices(String(block.thinking ?? ""), shape.textChunk ?? 4)) {
        events.push({
          event: "content_block_delta",
          data: { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking } },
        });
      }
      events.push({
        event: "content_block_delta",
        data: {
          type: "content_block_delta",
          index,
          delta: { type: "signature_delta", signature: String(block.signature ?? "") },
        },
      });
    } else {
      // Blocks that do not stream (redacted_thinking, server tool blocks) come whole with the start.
      events.push({
        event: "content_block_start",
        data: { type: "content_block_start", index, content_block: block },
      });
    }
    events.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
  });
  events.push(
    {
      event: "message_delta",
      data: {
        type: "message_delta",
        delta: { stop_reason: full.stop_reason, stop_sequence: full.stop_sequence },
        ...(usage ? { usage: { output_tokens: usage.output_tokens } } : {}),
      },
    },
    { event: "message_stop", data: { type: "message_stop" } },
  );
  return events;
}

/** A streamed reply of `message`. */
export function streamReply(
  message: WireMessage,
  shape: StreamShape = {},
  extra: Omit<Extract<WireReply, { type: "stream" }>, "type" | "events"> = {},
): WireReply {
  return { type: "stream", events: streamEvents(message, shape), ...extra };
}

/** An Anthropic error body. */
export function errorBody(errorType: string, message: string): Record<string, unknown> {
  return { type: "error", error: { type: errorType, message }, request_id: nextId("req") };
}

function encodeEvent(event: SseEvent): string {
  if ("raw" in event) return event.raw;
  return `event: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function write(res: ServerResponse, text: string): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed) return resolve();
    res.write(text, () => resolve());
  });
}

/** Starts a wire server on 127.0.0.1 with an empty reply queue. */
export async function startAnthropicWireServer(): Promise<AnthropicWireServer> {
  const queue: WireReply[] = [];
  const requests: RecordedRequest[] = [];
  const closed: Promise<void>[] = [];

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Keep the raw text.
    }
    const record: RecordedRequest = {
      method: req.method ?? "",
      path: req.url ?? "",
      headers: req.headers,
      body,
      closedEarly: false,
    };
    requests.push(record);
    closed.push(
      new Promise<void>((resolve) => {
        res.on("close", () => {
          if (!res.writableFinished) record.closedEarly = true;
          resolve();
        });
      }),
    );
    const requestId = nextId("req");
    const json = (status: number, payload: unknown, headers: Readonly<Record<string, string>> = {}) => {
      res.writeHead(status, { "content-type": "application/json", "request-id": requestId, ...headers });
      res.end(JSON.stringify(payload));
    };

    if (req.method !== "POST" || req.url?.split("?")[0] !== "/v1/messages") {
      json(404, errorBody("not_found_error", `Not found: ${req.method} ${req.url}`));
      return;
    }
    const reply = queue.shift();
    if (reply === undefined) {
      json(500, errorBody("api_error", `wire server: no scripted reply for request ${requests.length}`));
      return;
    }
    if (reply.type === "hang") return;
    if (reply.delayMs) await sleep(reply.delayMs);
    if (res.destroyed) return;

    switch (reply.type) {
      case "json":
        json(reply.status ?? 200, reply.body, reply.headers);
        return;
      case "error":
        json(reply.status, errorBody(reply.errorType, reply.message), reply.headers);
        return;
      case "raw":
        res.writeHead(reply.status, { "request-id": requestId, ...reply.headers });
        res.end(reply.body);
        return;
      case "stream": {
        res.writeHead(200, {
          "content-type": "text/event-stream; charset=utf-8",
          "cache-control": "no-cache",
          "request-id": requestId,
          ...reply.headers,
        });
        res.flushHeaders();
        let sent = 0;
        for (const event of reply.events) {
          if (reply.cutAfter === sent) {
            res.socket?.destroy();
            return;
          }
          if (reply.endAfter === sent) break;
          if (reply.holdAfter === sent) {
            // Keep the stream open until the client goes away (bounded, so a test cannot hang it).
            await Promise.race([new Promise((resolve) => res.on("close", resolve)), sleep(10_000)]);
            res.destroy();
            return;
          }
          if (reply.eventDelayMs) await sleep(reply.eventDelayMs);
          const encoded = encodeEvent(event);
          if (reply.splitWrites && encoded.length > 1) {
            const half = Math.floor(encoded.length / 2);
            await write(res, encoded.slice(0, half));
            await sleep(1);
            await write(res, encoded.slice(half));
          } else {
            await write(res, encoded);
          }
          sent++;
        }
        if (reply.cutAfter === sent) {
          res.socket?.destroy();
          return;
        }
        res.end();
        return;
      }
    }
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...replies) => {
      queue.push(...replies);
    },
    pending: () => queue.length,
    clientClosed: async (index) => {
      while (closed[index] === undefined) await sleep(5);
      await closed[index];
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
