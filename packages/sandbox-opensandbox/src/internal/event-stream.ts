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
   * `text` is then the start of the event's text (what fitted) and this is about how much of it
   * was dropped (exact for text without JSON escapes). The type is read from the line's start.
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
  /** While skipping an oversized line: its type, the start of its text, and the characters dropped. */
  let skipping: { type: string; text: string; dropped: number } | undefined;
  const startSkipping = (head: string) => {
    const type = /"type"\s*:\s*"([a-z_]+)"/.exec(head.slice(0, 200))?.[1] ?? "unknown";
    const at = /"text"\s*:\s*"/.exec(head);
    const raw = at ? head.slice(at.index + at[0].length) : "";
    // The kept head of the text: decoded as far as it parses (a cut escape is left out).
    let text = "";
    for (let end = raw.length; end > raw.length - 12 && end > 0; end--) {
      try {
        text = JSON.parse(`"${raw.slice(0, end)}"`) as string;
        break;
      } catch {
        // A cut escape sequence or a quote that ends the text: try a little shorter.
      }
    }
    skipping = { type, text, dropped: raw.length - JSON.stringify(text).length + 2 };
  };
  /** The oversized event, once its line ended with `tail`. */
  const endSkipping = (tail: string): ExecdEvent => {
    const suffix = /"\s*,\s*"timestamp"\s*:\s*\d+\s*}\s*$/.exec(tail);
    const dropped = skipping!.dropped + (suffix ? suffix.index : tail.length);
    const event = { type: skipping!.type, text: skipping!.text, oversizedBytes: Math.max(dropped, 0) };
    skipping = undefined;
    return event;
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let newline = buffer.indexOf("\n");
      while (newline >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (skipping) yield endSkipping(line);
        else {
          const event = parseLine(line);
          if (event) yield event;
        }
        newline = buffer.indexOf("\n");
      }
      if (buffer.length > maxLineBytes) {
        if (!skipping) startSkipping(buffer);
        else skipping.dropped += buffer.length;
        // Keep the end: it may hold the start of the closing suffix.
        const keep = buffer.slice(-64);
        skipping!.dropped -= keep.length;
        buffer = keep;
      }
    }
    buffer += decoder.decode();
    if (skipping) yield endSkipping(buffer);
    else {
      const last = parseLine(buffer);
      if (last) yield last;
    }
  } finally {
    reader.releaseLock();
  }
}
