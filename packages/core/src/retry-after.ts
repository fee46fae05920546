/** Anything with a `get` like `Headers`: the headers of an HTTP answer. */
export interface HeaderSource {
  get(name: string): string | null | undefined;
}

/**
 * How long a server asked us to wait before retrying, in milliseconds, read from the headers of
 * its answer: `retry-after-ms` (milliseconds, fractions allowed; preferred when usable) or
 * `retry-after` (delay-seconds, fractions allowed, or an HTTP date; a date in the past gives 0).
 * `undefined` when neither header is present or usable (negative, empty or unparseable values).
 * A provider puts the result into {@link ProviderError}'s `retryAfterMs`, and `callProvider`
 * and `streamProvider` wait that long (capped by the retry policy's `maxDelayMs`).
 *
 * @param headers - a `Headers` object or anything with the same `get` (the SDK errors' `headers`).
 * @param now - the current time in epoch milliseconds, for HTTP dates.
 */
export function parseRetryAfter(
  headers: HeaderSource | undefined,
  now: number = Date.now(),
): number | undefined {
  if (!headers || typeof headers.get !== "function") return undefined;
  const ms = headers.get("retry-after-ms")?.trim();
  if (ms && /^\+?\d+(\.\d+)?$/.test(ms)) return Number(ms);
  const after = headers.get("retry-after")?.trim();
  if (!after) return undefined;
  if (/^[+-]?\d+(\.\d+)?$/.test(after)) {
    const seconds = Number(after);
    return seconds >= 0 ? Math.round(seconds * 1000) : undefined;
  }
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
