import { backoffMs, sleep } from "./internal/backoff.js";
import { sseMessages } from "./internal/sse-messages.js";
import { OpenRathApiError } from "./openrath-api-error.js";
import type { Event } from "./types.js";

/** How `events.stream` reconnects after a dropped connection. */
export interface ReconnectOptions {
  /** Reconnections that may fail in a row before the stream throws (default 6); an opened connection resets the count. */
  readonly retries?: number;
  /** The first wait before reconnecting, in milliseconds (default 200); it doubles per failed attempt. */
  readonly minDelayMs?: number;
  /** The longest wait between attempts, in milliseconds (default 5000). */
  readonly maxDelayMs?: number;
}

/** Options of `client.events.stream(runId, options)`. */
export interface StreamOptions {
  /** Start after this stored sequence (default 0: from the run's first event). */
  readonly after?: number;
  /** End when the run parks for an interrupt or a review, not only when it ends (default false). */
  readonly parked?: boolean;
  /** Stops the stream; the iteration then throws the signal's reason. */
  readonly signal?: AbortSignal;
  /** Reconnection after a dropped connection, or `false` to throw at the first drop. */
  readonly reconnect?: ReconnectOptions | false;
}

/** A stored event of the run, in sequence order, each exactly once. */
export type StoredEvent = Event & { readonly live: false };

/** A live event (a token delta): published by a step, never stored, so not replayed on reconnect. */
export interface LiveEvent {
  readonly live: true;
  readonly runId: string;
  readonly type: string;
  readonly data: unknown;
  /** The run's last stored sequence when the step published it. */
  readonly after: number;
}

/** What `client.events.stream` yields: `live` tells the two apart. */
export type StreamEvent = StoredEvent | LiveEvent;

/** One connection to `GET /v1/runs/{runId}/stream`: the open response and its body. */
export type OpenStream = (request: {
  readonly after?: number;
  readonly lastEventId?: number;
  readonly parked: boolean;
  readonly signal: AbortSignal;
}) => Promise<{ readonly response: Response; readonly body: ReadableStream<Uint8Array> }>;

const DEFAULTS = { retries: 6, minDelayMs: 200, maxDelayMs: 5000 } as const;

/**
 * Follows a run's event stream across connections: after a drop it reconnects with
 * `Last-Event-ID` set to the last stored sequence seen and skips any stored event at or below it,
 * so each is yielded once. Ends when the server ends a response normally (the run ended, or parked).
 */
export async function* followStream(
  runId: string,
  open: OpenStream,
  options: StreamOptions = {},
): AsyncGenerator<StreamEvent> {
  const given = options.reconnect === false ? { retries: 0 } : (options.reconnect ?? {});
  const retries = given.retries ?? DEFAULTS.retries;
  const minDelayMs = given.minDelayMs ?? DEFAULTS.minDelayMs;
  const maxDelayMs = given.maxDelayMs ?? DEFAULTS.maxDelayMs;
  const controller = new AbortController();
  const outer = options.signal;
  const abort = () => controller.abort(outer?.reason);
  if (outer?.aborted) abort();
  outer?.addEventListener("abort", abort, { once: true });
  let last = options.after ?? 0;
  let resuming = false;
  let failures = 0;
  try {
    for (;;) {
      try {
        controller.signal.throwIfAborted();
        const { response, body } = await open({
          ...(resuming ? { lastEventId: last } : options.after !== undefined ? { after: options.after } : {}),
          parked: options.parked === true,
          signal: controller.signal,
        });
        failures = 0;
        for await (const message of sseMessages(body)) {
          const event = streamEventOf(runId, message, response);
          if (event === undefined) continue;
          if (!event.live) {
            if (event.sequence <= last) continue;
            last = event.sequence;
          }
          yield event;
        }
        return;
      } catch (error) {
        if (controller.signal.aborted) throw controller.signal.reason ?? error;
        if (!isRetryable(error) || failures >= retries) throw error;
        failures += 1;
        resuming = true;
        await sleep(backoffMs(failures, minDelayMs, maxDelayMs), controller.signal);
      }
    }
  } finally {
    outer?.removeEventListener("abort", abort);
    // Ends a connection still open when the caller stopped early.
    controller.abort();
  }
}

/**
 * A dropped or refused connection is worth another attempt: fetch's network failures and a body
 * cut off are `TypeError`s; the server's 5xx, 408 and 429, and its `stream_failed` frame.
 */
function isRetryable(error: unknown): boolean {
  if (OpenRathApiError.isInstance(error))
    return (
      error.code === "stream_failed" || error.status >= 500 || error.status === 408 || error.status === 429
    );
  return error instanceof TypeError;
}

/** The event a frame carries: stored ones have an id, live ones `event: live`; others are skipped. */
function streamEventOf(
  runId: string,
  message: { id?: string | undefined; event?: string | undefined; data: string },
  response: Response,
): StreamEvent | undefined {
  if (message.id !== undefined) {
    const event = dataOf(message.data, response) as Event;
    const sequence = typeof event.sequence === "number" ? event.sequence : Number(message.id);
    return { ...event, sequence, live: false };
  }
  if (message.event === "live") {
    const live = dataOf(message.data, response) as { type?: unknown; data?: unknown; after?: unknown };
    return {
      live: true,
      runId,
      type: String(live.type),
      data: live.data ?? null,
      after: typeof live.after === "number" ? live.after : 0,
    };
  }
  if (message.event === "error") {
    const failure = dataOf(message.data, response) as { code?: unknown; message?: unknown };
    throw new OpenRathApiError({
      status: response.status,
      code: typeof failure.code === "string" ? failure.code : "stream_failed",
      message: typeof failure.message === "string" ? failure.message : "The server's event stream failed.",
      requestId: response.headers.get("x-request-id"),
    });
  }
  return undefined;
}

function dataOf(data: string, response: Response): unknown {
  try {
    return JSON.parse(data);
  } catch (cause) {
    throw new OpenRathApiError({
      status: response.status,
      code: "unexpected_response",
      message: `An event stream frame's data is not JSON: ${data.slice(0, 200)}`,
      requestId: response.headers.get("x-request-id"),
      cause,
    });
  }
}
