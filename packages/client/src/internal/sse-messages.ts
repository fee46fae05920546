import { createParser, type EventSourceMessage } from "eventsource-parser";

/**
 * The server-sent events of a response body, one message per complete frame. A frame cut off by
 * the end of the body is dropped, as an EventSource drops it. Cancels the body when the caller
 * stops early.
 */
export async function* sseMessages(body: ReadableStream<Uint8Array>): AsyncGenerator<EventSourceMessage> {
  const parsed: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (message) => parsed.push(message) });
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let done = false;
  try {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
      parser.feed(decoder.decode(chunk.value, { stream: true }));
      yield* parsed.splice(0);
    }
    done = true;
  } finally {
    if (!done) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
