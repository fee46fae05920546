import type { HeardRunsV1, Signal, SignalsV1, SignalTopic } from "../contract/signals.js";
import { topicOf } from "../contract/signals.js";
import { HeardRuns } from "./heard-runs.js";

/**
 * Signals inside one process: what the embedded store (PGlite) uses, and a building block for
 * stores that deliver their own notifications to local listeners. Listeners run synchronously in
 * publish order; a throwing listener does not stop the others. What is delivered is noted in
 * `heard`, which answers `heardRuns` (see `HeardRunsV1`); a store that delivers what it receives
 * elsewhere passes a {@link HeardRuns} it marks lost across its gaps.
 *
 * @example
 * ```ts
 * const signals = inProcessSignals();
 * const stop = await signals.subscribe("work", () => wake());
 * await signals.publish({ kind: "work" });
 * await stop();
 * ```
 */
export function inProcessSignals(
  name = "in-process",
  heard = new HeardRuns(),
): SignalsV1 & {
  /** Delivers a signal to local listeners synchronously (for stores that received it elsewhere). */
  deliver(signal: Signal): void;
  heardRuns: HeardRunsV1;
} {
  const listeners = new Map<SignalTopic, Set<(signal: Signal) => void>>();
  let closed = false;
  const deliver = (signal: Signal) => {
    if (closed) return;
    heard.note(signal);
    const set = listeners.get(topicOf(signal));
    if (!set) return;
    for (const listener of [...set]) {
      try {
        listener(signal);
      } catch {
        // A listener's failure is its own; signals are hints and must not break the publisher.
      }
    }
  };
  return {
    specVersion: "v1",
    name,
    capabilities: { crossProcess: false, livePayloads: true, heardRuns: true },
    deliver,
    heardRuns: { specVersion: "v1", heard: (runId, since) => heard.heard(runId, since) },
    async publish(signal) {
      deliver(signal);
    },
    async subscribe(topic, listener) {
      let set = listeners.get(topic);
      if (!set) {
        set = new Set();
        listeners.set(topic, set);
      }
      const own = (signal: Signal) => listener(signal);
      set.add(own);
      return async () => {
        set.delete(own);
        if (set.size === 0 && listeners.get(topic) === set) listeners.delete(topic);
      };
    },
    async close() {
      closed = true;
      listeners.clear();
    },
  };
}
