import type { Signal } from "@openrath/runtime-durable";

/** How long a Redis delivery waits to be matched by its fallback twin before it is forgotten. */
const TWIN_TTL_MS = 10_000;

const keyOf = (signal: Signal): string | undefined => {
  if (signal.kind === "work") return `w:${signal.planHash ?? ""}`;
  if (signal.kind === "cancel") return `c:${signal.runId}`;
  return signal.live !== undefined || signal.seq < 0 ? undefined : `e:${signal.runId}:${signal.seq}`;
};

/**
 * Pairs the two copies of a signal (one through Redis, one through the fallback) so each is
 * delivered once: the Redis copy at once; a fallback copy that comes first waits `graceMs` for its
 * twin, and is delivered by `release` if none comes.
 */
export function twinMatcher(graceMs: number, release: (signal: Signal) => void) {
  const fromRedisUnmatched = new Map<string, { count: number; at: number }>();
  const deliveredLate = new Map<string, number>();
  const held = new Map<string, { queue: Signal[]; timer: NodeJS.Timeout }>();
  const take = (map: Map<string, number>, key: string) => {
    const n = map.get(key) ?? 0;
    if (n <= 0) return false;
    if (n === 1) map.delete(key);
    else map.set(key, n - 1);
    return true;
  };
  const releaseHeld = (key: string) => {
    const entry = held.get(key);
    if (!entry) return;
    held.delete(key);
    clearTimeout(entry.timer);
    for (const signal of entry.queue) {
      deliveredLate.set(key, (deliveredLate.get(key) ?? 0) + 1);
      release(signal);
    }
  };
  return {
    /** Notes a Redis copy; true when its fallback twin had already been delivered or was held. */
    fromRedis(signal: Signal): boolean {
      const key = keyOf(signal);
      if (key === undefined) return false;
      const entry = held.get(key);
      if (entry) {
        entry.queue.shift();
        if (entry.queue.length === 0) {
          clearTimeout(entry.timer);
          held.delete(key);
        }
        return true;
      }
      if (take(deliveredLate, key)) return false;
      const now = Date.now();
      const seen = fromRedisUnmatched.get(key);
      fromRedisUnmatched.set(key, { count: (seen?.count ?? 0) + 1, at: now });
      if (fromRedisUnmatched.size > 10_000) {
        for (const [k, v] of fromRedisUnmatched) if (now - v.at > TWIN_TTL_MS) fromRedisUnmatched.delete(k);
      }
      return false;
    },
    /** What to do with a fallback copy: drop it (twin seen), deliver it now, or hold it for its twin. */
    fromFallback(signal: Signal, redisUp: boolean): "duplicate" | "deliver" | "held" {
      const key = keyOf(signal);
      if (key === undefined) return "deliver";
      const seen = fromRedisUnmatched.get(key);
      if (seen && Date.now() - seen.at <= TWIN_TTL_MS) {
        if (seen.count <= 1) fromRedisUnmatched.delete(key);
        else seen.count--;
        return "duplicate";
      }
      if (!redisUp) return "deliver";
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
      fromRedisUnmatched.clear();
      deliveredLate.clear();
    },
  };
}
