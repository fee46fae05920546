/** One event of an execd stream (`/command`, `/code`). Unknown types pass through. */
export interface ExecdEvent {
  readonly type: string;
  readonly text?: string;
  readonly execution_count?: number;
  readonly execution_time?: number;
  readonly timestamp?: number;
  readonly results?: Record<string, unknown>;
  readonly error?: {
    readonly ename?: string;
    readonly evalue?: string;
    readonly traceback?: readonly string[];
  };
}

function parseLine(raw: string): ExecdEvent | undefined {
  const line = raw.trim();
  if (line === "" || line.startsWith(":")) return undefined;
  if (line.startsWith("event:") || line.startsWith("id:") || line.startsWith("retry:")) return undefined;
  const json = line.startsWith("data:") ? line.slice(5).trim() : line;
  if (json === "") return undefined;
  try {
    const value = JSON.parse(json) as unknown;
    if (
      typeof value === "object" &&
      value !== null &&
      typeof (value as { type?: unknown }).type === "string"
    ) {
      return value as ExecdEvent;
    }
  } catch {
    // Not an event (a proxy's keep-alive comment, a partial frame): skip it, as the SDKs do.
  }
  return undefined;
}

/**
 * Parses execd's event stream, which is not standard SSE: each event is one JSON object followed
 * by a blank line, without `data:`. Standard `data:` framing is accepted too, and `:`, `event:`,
 * `id:` and `retry:` lines are skipped, so a proxy that rewrites the stream does not break it.
 * Errors of the underlying body (a dropped connection) propagate.
 */
export async function* parseEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<ExecdEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder("utf-8");
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let newline = buffer.indexOf("\n");
      while (newline >= 0) {
        const event = parseLine(buffer.slice(0, newline));
        buffer = buffer.slice(newline + 1);
        if (event) yield event;
        newline = buffer.indexOf("\n");
      }
    }
    buffer += decoder.decode();
    const last = parseLine(buffer);
    if (last) yield last;
  } finally {
    reader.releaseLock();
  }
}
