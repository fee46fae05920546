import type { Signal } from "@openrath/runtime-durable/store";

/** How long a delivered copy waits to be matched by its twin from the other path before it is forgotten. */
const TWIN_TTL_MS = 10_000;

const keyOf = (signal: Signal): string | undefined => {
  if (signal.kind === "work") return `w:${signal.planHash ?? ""}`;
  if (signal.kind === "cancel") return `c:${signal.runId}`;
  return signal.live !== undefined || signal.seq < 0 ? undefined : `e:${signal.runId}:${signal.seq}`;
};

/** Copies delivered from one path whose twin from the other path has not come yet, by key. */
function unmatchedCopies() {
  const copies = new Map<string, { count: number; at: number }>();
  return {
    note(key: string) {
      const now = Date.now();
      const seen = copies.get(key);
      copies.set(key, { count: (seen?.count ?? 0) + 1, at: now });
      if (copies.size > 10_000) {
        for (const [k, v] of copies) if (now - v.at > TWIN_TTL_MS) copies.delete(k);
      }
    },
    /** Consumes one unmatched copy of `key`: true when there was one (the caller's copy is its twin). */
    take(key: string): boolean {
      const seen = copies.get(key);
      if (!seen) return false;
      if (Date.now() - seen.at > TWIN_TTL_MS || seen.count <= 1) copies.delete(key);
      else seen.count--;
      return Date.now() - seen.at <= TWIN_TTL_MS;
    },
    clear() {
      copies.clear();
    },
  };
}

/**
 * Pairs the two copies of a signal (one through Redis, one through the fallback) so each signal
 * is delivered once. `work` and `cancel`: whichever copy comes first is delivered, the other is
 * dropped. Run events: the Redis copy is preferred (Redis keeps a publisher's live events and
 * hints in order); a fallback copy that comes first waits `graceMs` for its twin and is delivered
 * by `release` when none comes. With Redis down, fallback copies are delivered at once.
 */
export function twinMatcher(graceMs: number, release: (signal: Signal) => void) {
  const fromRedis = unmatchedCopies();
  const fromFallback = unmatchedCopies();
  const held = new Map<string, { queue: Signal[]; timer: NodeJS.Timeout }>();
  const releaseHeld = (key: string) => {
    const entry = held.get(key);
    if (!entry) return;
    held.delete(key);
    clearTimeout(entry.timer);
    for (const signal of entry.queue) {
      fromFallback.note(key);
      release(signal);
    }
  };
  return {
    /**
     * A copy through Redis: `deliver` it; `replace` (deliver it, and the held fallback twin is
     * dropped); or `duplicate` (its twin was delivered already).
     */
    fromRedis(signal: Signal): "deliver" | "replace" | "duplicate" {
      const key = keyOf(signal);
      if (key === undefined) return "deliver";
      const entry = held.get(key);
      if (entry) {
        entry.queue.shift();
        if (entry.queue.length === 0) {
          clearTimeout(entry.timer);
          held.delete(key);
        }
        return "replace";
      }
      if (fromFallback.take(key)) return "duplicate";
      fromRedis.note(key);
      return "deliver";
    },
    /** A copy through the fallback: `deliver` it now, drop it (`duplicate`), or it is `held` for its twin. */
    fromFallback(signal: Signal, redisUp: boolean): "duplicate" | "deliver" | "held" {
      const key = keyOf(signal);
      if (key === undefined) return "deliver";
      if (fromRedis.take(key)) return "duplicate";
      if (!redisUp) return "deliver";
      if (signal.kind !== "event") {
        fromFallback.note(key);
        return "deliver";
      }
      const entry = held.get(key);
      if (entry) entry.queue.push(signal);
      else {
        const timer = setTimeout(() => releaseHeld(key), graceMs);
        timer.unref?.();
        held.set(key, { queue: [signal], timer });
      }
      return "held";
    },
    /** Releases every held copy now (the Redis connection was lost). */
    flush() {
      for (const key of [...held.keys()]) releaseHeld(key);
    },
    clear() {
      for (const entry of held.values()) clearTimeout(entry.timer);
      held.clear();
      fromRedis.clear();
      fromFallback.clear();
    },
  };
}
