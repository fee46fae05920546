/**
 * The wait before reconnection `attempt` (from 1): doubling from `minMs` up to `maxMs`, then
 * scaled by a random factor in [0.5, 1) so that many followers of one restarted server spread out.
 */
export function backoffMs(attempt: number, minMs: number, maxMs: number, random = Math.random): number {
  const ceiling = Math.min(maxMs, minMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling * (0.5 + random() / 2));
}

/** Resolves after `ms`, or rejects with the signal's reason when it fires first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = () => {
      signal?.removeEventListener("abort", aborted);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const aborted = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", aborted, { once: true });
  });
}
