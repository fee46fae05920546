import type { Signal, SignalTopic } from "@openrath/runtime-durable/store";

/** The Redis channel a topic is published on: `<prefix>:work`, `<prefix>:cancel`, `<prefix>:run:<id>`. */
export function channelOf(prefix: string, topic: SignalTopic): string {
  return `${prefix}:${topic}`;
}

/** The topic of a channel under `prefix`, or `undefined` for a channel that is not ours. */
export function topicOfChannel(prefix: string, channel: string): SignalTopic | undefined {
  if (!channel.startsWith(`${prefix}:`)) return undefined;
  const topic = channel.slice(prefix.length + 1);
  if (topic === "work" || topic === "cancel") return topic;
  if (topic.startsWith("run:") && topic.length > 4) return topic as SignalTopic;
  return undefined;
}

/** A signal as the compact JSON message Redis carries (the channel already names the topic). */
export function encodeSignal(signal: Signal): string {
  switch (signal.kind) {
    case "work":
      return JSON.stringify(signal.planHash === undefined ? { k: "w" } : { k: "w", p: signal.planHash });
    case "cancel":
      return JSON.stringify({ k: "c", r: signal.runId });
    case "event":
      return JSON.stringify(
        signal.live === undefined
          ? { k: "e", r: signal.runId, s: signal.seq }
          : { k: "e", r: signal.runId, s: signal.seq, l: signal.live },
      );
  }
}

/**
 * The signal in a message received on `topic`, or `undefined` when the message is malformed or
 * does not belong to the topic it arrived on (another writer on a shared Redis): such messages are
 * dropped, never delivered.
 */
export function decodeSignal(topic: SignalTopic, message: string): Signal | undefined {
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const m = value as { k?: unknown; p?: unknown; r?: unknown; s?: unknown; l?: unknown };
  if (topic === "work" && m.k === "w") {
    if (m.p === undefined) return { kind: "work" };
    return typeof m.p === "string" ? { kind: "work", planHash: m.p } : undefined;
  }
  if (topic === "cancel" && m.k === "c" && typeof m.r === "string" && m.r !== "") {
    return { kind: "cancel", runId: m.r };
  }
  if (topic.startsWith("run:") && m.k === "e" && m.r === topic.slice(4)) {
    if (typeof m.s !== "number" || !Number.isInteger(m.s)) return undefined;
    return m.l === undefined
      ? { kind: "event", runId: m.r, seq: m.s }
      : { kind: "event", runId: m.r, seq: m.s, live: m.l };
  }
  return undefined;
}
