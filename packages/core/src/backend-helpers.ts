/** Options of {@link backoffDelay}. */
export interface BackoffOptions {
  /** The wait before the first retry, in milliseconds. */
  readonly baseMs: number;
  /** The longest wait, in milliseconds (`Infinity` for none). */
  readonly maxMs: number;
  /** A random source in [0, 1): adds up to `baseMs` to the wait, so retries spread out. */
  readonly jitter?: () => number;
}

/**
 * The wait before retry number `attempt` (1-based): `baseMs` doubled per attempt, plus jitter,
 * at most `maxMs`.
 *
 * @example
 * ```ts
 * backoffDelay(3, { baseMs: 100, maxMs: 1000 }); // 400
 * ```
 */
export function backoffDelay(attempt: number, options: BackoffOptions): number {
  const { baseMs, maxMs, jitter } = options;
  const wait = baseMs * 2 ** Math.max(0, attempt - 1) + (jitter ? jitter() * baseMs : 0);
  return Math.min(maxMs, wait);
}

/**
 * A `Map` that holds at most `limit` entries: setting a new key when full drops the oldest one
 * (first in, first out). Setting a key it already holds does not make it newer.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(readonly limit: number) {
    super();
    if (!(limit >= 1)) throw new RangeError(`A BoundedMap needs a limit of at least 1, got ${limit}.`);
  }

  override set(key: K, value: V): this {
    if (!this.has(key) && this.size >= this.limit) this.delete(this.keys().next().value as K);
    return super.set(key, value);
  }
}
