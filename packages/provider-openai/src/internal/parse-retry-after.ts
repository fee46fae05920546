/** Anything with a `get` like `Headers`. */
export interface HeaderSource {
  get(name: string): string | null;
}

/**
 * How long the server asked us to wait, in milliseconds, from `retry-after-ms` (OpenAI's
 * millisecond header, preferred) or `retry-after` (seconds, or an HTTP date). `undefined` when
 * neither header is present or parses; a date in the past gives 0.
 */
export function parseRetryAfter(
  headers: HeaderSource | undefined,
  now: number = Date.now(),
): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get("retry-after-ms")?.trim();
  if (ms) {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return value;
  }
  const after = headers.get("retry-after")?.trim();
  if (!after) return undefined;
  if (/^[+-]?\d+(\.\d+)?$/.test(after)) {
    const seconds = Number(after);
    return seconds >= 0 ? seconds * 1000 : undefined;
  }
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
