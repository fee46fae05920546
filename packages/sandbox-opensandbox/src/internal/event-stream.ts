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
  /**
   * Set (by this parser, never by execd) on an event whose line was longer than the parser keeps:
   * the line's length in bytes. Its `text` is absent; the type is read from the line's start.
   */
  readonly oversizedBytes?: number;
}

/** Longest event line kept by default: one output line of execd is one event. */
export const DEFAULT_MAX_LINE_BYTES = 4 * 1024 * 1024;

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
 *
 * The line buffer is bounded: a line longer than `maxLineBytes` (one giant output line, a hostile
 * proxy) is not kept; it yields a single event with `oversizedBytes` and the type read from its
 * first bytes, so the caller can count it as cut output. Errors of the underlying body (a dropped
 * connection) propagate.
 */
export async function* parseEventStream(
  body: ReadableStream<Uint8Array>,
  maxLineBytes = DEFAULT_MAX_LINE_BYTES,
): AsyncGenerator<ExecdEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder("utf-8");
  let buffer = "";
  /** While skipping an oversized line: its type and its length so far. */
  let skipping: { type: string; bytes: number } | undefined;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let newline = buffer.indexOf("\n");
      while (newline >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (skipping) {
          yield { type: skipping.type, oversizedBytes: skipping.bytes + line.length };
          skipping = undefined;
        } else {
          const event = parseLine(line);
          if (event) yield event;
        }
        newline = buffer.indexOf("\n");
      }
      if (buffer.length > maxLineBytes) {
        if (!skipping) {
          const type = /"type"\s*:\s*"([a-z_]+)"/.exec(buffer.slice(0, 200))?.[1] ?? "unknown";
          skipping = { type, bytes: 0 };
        }
        skipping.bytes += buffer.length;
        buffer = "";
      }
    }
    buffer += decoder.decode();
    if (skipping) yield { type: skipping.type, oversizedBytes: skipping.bytes + buffer.length };
    else {
      const last = parseLine(buffer);
      if (last) yield last;
    }
  } finally {
    reader.releaseLock();
  }
}
