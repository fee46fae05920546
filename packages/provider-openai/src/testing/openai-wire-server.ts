import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A request the wire server received, with its body parsed as JSON (or `undefined` if it was not JSON). */
export interface RecordedRequest {
  readonly method: string;
  /** Path and query, such as `/v1/chat/completions`. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly rawBody: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests index freely into the recorded JSON body.
  readonly body: any;
  /**
   * Resolves when the response's connection closes: `true` when the client went away before the
   * server finished its reply (an abort), `false` when the reply ended normally.
   */
  readonly closedEarly: Promise<boolean>;
}

/**
 * One server-sent event of a scripted stream: a JSON `data:` payload (with an `event:` line when
 * `event` is given, as the Responses API sends), or raw bytes written verbatim.
 */
export type WireStreamEvent = { readonly data: unknown; readonly event?: string } | { readonly raw: string };

/** A scripted reply, answered in order, one per request. */
export type WireReply =
  | {
      readonly type: "json";
      readonly body: unknown;
      readonly status?: number;
      readonly headers?: Readonly<Record<string, string>>;
    }
  | {
      /** An OpenAI error body: `{ "error": { "message", "type", "param", "code" } }`. */
      readonly type: "error";
      readonly status: number;
      readonly message: string;
      readonly errorType?: string;
      readonly param?: string | null;
      readonly code?: string | null;
      readonly headers?: Readonly<Record<string, string>>;
    }
  | {
      /** A body that is not JSON at all, with the given content type. */
      readonly type: "text";
      readonly body: string;
      readonly status?: number;
      readonly contentType?: string;
    }
  | {
      /** A `text/event-stream` reply: each event as `data: ...\n\n`. */
      readonly type: "stream";
      readonly events: readonly WireStreamEvent[];
      /** Send `data: [DONE]` after the events (default true). */
      readonly done?: boolean;
      /** Destroy the socket after the events, before the terminal chunk (default false). */
      readonly cut?: boolean;
      /** Keep the response open after the events until the client closes it (default false). */
      readonly hang?: boolean;
      /** Pause before each event, in milliseconds (default 0). */
      readonly delayMs?: number;
      readonly headers?: Readonly<Record<string, string>>;
    }
  | {
      /** Accept the request and never answer until the client gives up. */
      readonly type: "hang";
    };

/** A running fake of OpenAI's Chat Completions and Responses endpoints on 127.0.0.1. */
export interface OpenAIWireServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** `http://127.0.0.1:<port>/v1`, the value to pass as `baseURL`. */
  readonly baseURL: string;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Appends replies to the queue; each request takes the next one. */
  enqueue(...replies: WireReply[]): void;
  /** Replies not yet used. */
  pending(): number;
  /** Stops the server and drops every open connection. */
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function requestId(): string {
  return `req_${Math.random().toString(16).slice(2, 18)}`;
}

function sendError(
  res: ServerResponse,
  status: number,
  error: { message: string; type: string; param: string | null; code: string | null },
  headers: Readonly<Record<string, string>> = {},
): void {
  const body = JSON.stringify({ error }, null, 2);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    "x-request-id": requestId(),
    ...headers,
  });
  res.end(body);
}

async function sendStream(res: ServerResponse, reply: Extract<WireReply, { type: "stream" }>): Promise<void> {
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "x-request-id": requestId(),
    "openai-processing-ms": "42",
    ...reply.headers,
  });
  res.flushHeaders();
  for (const event of reply.events) {
    if (reply.delayMs) await sleep(reply.delayMs);
    if (res.destroyed) return;
    if ("raw" in event) res.write(event.raw);
    else res.write(`${event.event ? `event: ${event.event}\n` : ""}data: ${JSON.stringify(event.data)}\n\n`);
  }
  if (reply.cut) {
    // Let the written bytes leave before the socket goes, so the client sees a stream cut mid-way.
    await sleep(20);
    res.socket?.destroy();
    return;
  }
  if (reply.hang) return;
  if (reply.done ?? true) res.write("data: [DONE]\n\n");
  res.end();
}

/**
 * Starts a local HTTP server that speaks OpenAI's `/v1/chat/completions` and `/v1/responses` wire
 * formats closely enough for the official `openai` SDK to run against it unmodified (bodies from
 * {@link chatCompletion} / `responseBody`, streams from {@link chatCompletionChunks} /
 * `responseEvents`; a Responses stream is scripted with `done: false`, since it ends without
 * `[DONE]`). Replies come from one scripted queue, whichever endpoint asks; every request body
 * is recorded.
 *
 * @example
 * ```ts
 * const server = await startOpenAIWireServer();
 * server.enqueue({ type: "json", body: chatCompletion({ content: "hi" }) });
 * const provider = openaiProvider({ baseURL: server.baseURL, apiKey: "sk-test", model: "gpt-4o-mini" });
 * ```
 */
export async function startOpenAIWireServer(): Promise<OpenAIWireServer> {
  const queue: WireReply[] = [];
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => {
      const rawBody = Buffer.concat(parts).toString("utf8");
      let body: unknown;
      try {
        body = rawBody === "" ? undefined : JSON.parse(rawBody);
      } catch {
        body = undefined;
      }
      const closedEarly = new Promise<boolean>((resolve) => {
        res.on("close", () => resolve(!res.writableFinished));
      });
      requests.push({
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        rawBody,
        body,
        closedEarly,
      });
      if (req.method !== "POST" || (req.url !== "/v1/chat/completions" && req.url !== "/v1/responses")) {
        sendError(res, 404, {
          message: `Invalid URL (${req.method} ${req.url})`,
          type: "invalid_request_error",
          param: null,
          code: null,
        });
        return;
      }
      const reply = queue.shift();
      if (reply === undefined) {
        sendError(res, 500, {
          message: "openai-wire-server: no scripted reply left for this request",
          type: "server_error",
          param: null,
          code: null,
        });
        return;
      }
      switch (reply.type) {
        case "json": {
          const text = JSON.stringify(reply.body, null, 2);
          res.writeHead(reply.status ?? 200, {
            "content-type": "application/json",
            "content-length": Buffer.byteLength(text),
            "x-request-id": requestId(),
            "openai-processing-ms": "42",
            ...reply.headers,
          });
          res.end(text);
          return;
        }
        case "error":
          sendError(
            res,
            reply.status,
            {
              message: reply.message,
              type: reply.errorType ?? "invalid_request_error",
              param: reply.param ?? null,
              code: reply.code ?? null,
            },
            reply.headers,
          );
          return;
        case "text":
          res.writeHead(reply.status ?? 200, { "content-type": reply.contentType ?? "application/json" });
          res.end(reply.body);
          return;
        case "stream":
          void sendStream(res, reply);
          return;
        case "hang":
          return;
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    baseURL: `${url}/v1`,
    requests,
    enqueue: (...replies) => {
      queue.push(...replies);
    },
    pending: () => queue.length,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** Token counts for {@link chatCompletion} and {@link chatCompletionChunks}, in OpenAI's wire names. */
export interface WireUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens?: number;
  readonly cached_tokens?: number;
  readonly reasoning_tokens?: number;
}

function usageBody(usage: WireUsage) {
  return {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.total_tokens ?? usage.prompt_tokens + usage.completion_tokens,
    prompt_tokens_details: { cached_tokens: usage.cached_tokens ?? 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: usage.reasoning_tokens ?? 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

/** A tool call to script: its id, name and the raw argument text (split into pieces for streams). */
export interface WireToolCall {
  readonly id: string;
  readonly name: string;
  /** The argument pieces; a complete reply joins them. */
  readonly arguments: readonly string[];
}

/** What to script in a reply. */
export interface WireCompletion {
  readonly model?: string;
  /** Text pieces; a complete reply joins them. `undefined` means no text (content `null`). */
  readonly content?: readonly string[] | string;
  readonly refusal?: string;
  readonly toolCalls?: readonly WireToolCall[];
  /** Defaults to `tool_calls` when there are tool calls, else `stop`. */
  readonly finishReason?: string;
  /** Usage to report; `null` leaves it out. */
  readonly usage?: WireUsage | null;
}

const CREATED = 1_767_225_600;

/** A `chat.completion` body as OpenAI returns it for a non-streamed request. */
export function chatCompletion(spec: WireCompletion = {}) {
  const content =
    spec.content === undefined
      ? null
      : typeof spec.content === "string"
        ? spec.content
        : spec.content.join("");
  const toolCalls = spec.toolCalls?.map((call) => ({
    id: call.id,
    type: "function",
    function: { name: call.name, arguments: call.arguments.join("") },
  }));
  return {
    id: "chatcmpl-wire0001",
    object: "chat.completion",
    created: CREATED,
    model: spec.model ?? "gpt-4o-mini-2024-07-18",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content,
          refusal: spec.refusal ?? null,
          ...(toolCalls && toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          annotations: [],
        },
        logprobs: null,
        finish_reason: spec.finishReason ?? (toolCalls && toolCalls.length > 0 ? "tool_calls" : "stop"),
      },
    ],
    ...(spec.usage === null
      ? {}
      : { usage: usageBody(spec.usage ?? { prompt_tokens: 10, completion_tokens: 5 }) }),
    service_tier: "default",
    system_fingerprint: "fp_wire",
  };
}

/**
 * The `chat.completion.chunk` events OpenAI streams for `spec` with `stream_options.include_usage`:
 * a role chunk, one chunk per text piece, tool calls (id and name first, then one chunk per
 * argument piece), a finish chunk, then a usage-only chunk with empty `choices`.
 */
export function chatCompletionChunks(spec: WireCompletion = {}): WireStreamEvent[] {
  const model = spec.model ?? "gpt-4o-mini-2024-07-18";
  const chunk = (choice: Record<string, unknown> | undefined, extra: Record<string, unknown> = {}) => ({
    data: {
      id: "chatcmpl-wire0001",
      object: "chat.completion.chunk",
      created: CREATED,
      model,
      service_tier: "default",
      system_fingerprint: "fp_wire",
      choices: choice ? [{ index: 0, logprobs: null, finish_reason: null, ...choice }] : [],
      usage: null,
      obfuscation: "x1",
      ...extra,
    },
  });
  const events: WireStreamEvent[] = [chunk({ delta: { role: "assistant", content: "", refusal: null } })];
  const pieces =
    spec.content === undefined ? [] : typeof spec.content === "string" ? [spec.content] : spec.content;
  for (const piece of pieces) events.push(chunk({ delta: { content: piece } }));
  if (spec.refusal !== undefined) events.push(chunk({ delta: { refusal: spec.refusal } }));
  spec.toolCalls?.forEach((call, index) => {
    events.push(
      chunk({
        delta: {
          tool_calls: [
            { index, id: call.id, type: "function", function: { name: call.name, arguments: "" } },
          ],
        },
      }),
    );
    for (const piece of call.arguments) {
      events.push(chunk({ delta: { tool_calls: [{ index, function: { arguments: piece } }] } }));
    }
  });
  const finish = spec.finishReason ?? (spec.toolCalls && spec.toolCalls.length > 0 ? "tool_calls" : "stop");
  events.push(chunk({ delta: {}, finish_reason: finish }));
  if (spec.usage !== null) {
    events.push(
      chunk(undefined, { usage: usageBody(spec.usage ?? { prompt_tokens: 10, completion_tokens: 5 }) }),
    );
  }
  return events;
}
