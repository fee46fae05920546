import { type ExecdEvent, parseEventStream } from "./event-stream.js";
import type { ConnectionConfig } from "./sdk.js";

/**
 * The few execd calls the adapter makes itself (the SDK's command stream has an unbounded line
 * buffer, and it has no code-interpreter client): JSON requests, and event streams read through
 * the bounded {@link parseEventStream}. Errors are shaped like the SDK's `SandboxApiException`
 * (`statusCode`, `rawBody`), so the error mapping reads both the same way.
 */
export class ExecdClient {
  constructor(
    private readonly config: ConnectionConfig,
    /** `<scheme>://<endpoint>` of execd, path prefix included, no trailing slash. */
    readonly url: string,
    /** Headers of every execd call. */
    readonly headers: Readonly<Record<string, string>>,
  ) {}

  /** One request; rejects with the parsed error body on a non-2xx answer. */
  async call(method: string, path: string, body?: unknown): Promise<Response> {
    const response = await this.config.fetch(`${this.url}${path}`, {
      method,
      headers: { ...this.headers, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    if (!response.ok) throw await httpFailure(response);
    return response;
  }

  /** A JSON request's answer. */
  async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    return (await (await this.call(method, path, body)).json()) as T;
  }

  /** Starts a streaming request (`POST /command`, `POST /code`) and yields its events. */
  async *stream(path: string, body: unknown, signal: AbortSignal): AsyncGenerator<ExecdEvent> {
    const response = await this.config.sseFetch(`${this.url}${path}`, {
      method: "POST",
      headers: { ...this.headers, accept: "text/event-stream", "content-type": "application/json" },
      body: JSON.stringify(body),
      signal,
    });
    if (!response.ok) throw await httpFailure(response);
    if (!response.body) throw new TypeError(`execd answered ${path} without a body`);
    yield* parseEventStream(response.body);
  }

  /** `DELETE /command?id=`: execd signals the command's process group (SIGTERM, SIGKILL after 3 s). */
  async interruptCommand(id: string): Promise<void> {
    await this.call("DELETE", `/command?id=${encodeURIComponent(id)}`);
  }
}

/** An error shaped like the SDK's `SandboxApiException`, so `remoteFailure` reads it the same way. */
export async function httpFailure(response: Response): Promise<Error> {
  const text = await response.text().catch(() => "");
  const error = new Error(`HTTP ${response.status}`) as Error & {
    statusCode: number;
    rawBody: string;
    requestId?: string;
  };
  error.statusCode = response.status;
  error.rawBody = text.length > 4096 ? text.slice(0, 4096) : text;
  const requestId = response.headers.get("x-request-id");
  if (requestId) error.requestId = requestId;
  return error;
}
