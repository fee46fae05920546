import type { RedisOptions } from "ioredis";

const URL_SHAPE = "redis://[user:password@]host:port[/db] or rediss://…";

/** Where the signals connect, for messages, and the passwords to keep out of them. */
export interface RedisTarget {
  /** The URL without its password, or one made of the `redis` options' host and port. */
  readonly url: string;
  /** Every password the options carry (scrubbed from Redis's error messages). */
  readonly secrets: readonly string[];
}

/**
 * `text` with its password taken out (`***`). Text that does not parse as a URL loses whatever
 * stands between the first `:` of its user part and its last `@`, so a malformed URL cannot leak
 * its password either.
 */
export function redactUrl(text: string): string {
  const shown = (s: string) => (s.length > 200 ? `${s.slice(0, 200)}…` : s);
  const parsed = URL.canParse(text) ? new URL(text) : undefined;
  // An "@" in the path is likely a password with an unencoded "/" in it: the text rule below.
  if (parsed && text.includes("//") && !parsed.pathname.includes("@")) {
    if (parsed.password) parsed.password = "***";
    return shown(parsed.href);
  }
  const at = text.lastIndexOf("@");
  if (at < 0) return shown(text);
  const scheme = text.indexOf("://");
  const start = scheme >= 0 && scheme < at ? scheme + 3 : 0;
  const colon = text.slice(start, at).indexOf(":");
  return shown(colon < 0 ? text : `${text.slice(0, start + colon)}:***${text.slice(at)}`);
}

/**
 * What is wrong with a Redis URL, said without its password, or `undefined` when it is a
 * `redis:`/`rediss:` URL with a host, a port in 1 to 65535 and a numeric database. Checked before
 * anything connects: ioredis would take `http://h` for a host named "http".
 */
export function redisUrlProblem(url: string): string | undefined {
  if (url.trim() === "") return `a Redis URL must be a non-empty string; use ${URL_SHAPE}`;
  const shown = redactUrl(url);
  const problem = (what: string) =>
    `the Redis URL ${JSON.stringify(shown)} is not valid: ${what}; use ${URL_SHAPE}`;
  const port = /^[^:/?#]+:\/\/(?:[^/?#]*@)?(?:\[[^\]]*\]|[^:/?#@]*):(\d+)(?:[/?#]|$)/.exec(url)?.[1];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) {
    return problem(`port ${port} is out of range (1 to 65535)`);
  }
  if (!URL.canParse(url) || !url.includes("://")) return problem("it is not a URL");
  const parsed = new URL(url);
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") {
    return problem(`the scheme "${parsed.protocol}" is not "redis:" or "rediss:"`);
  }
  if (!parsed.hostname) return problem("it names no host");
  const db = parsed.pathname.replace(/^\//, "");
  if (db !== "" && !/^\d+$/.test(db)) return problem(`the database "${db}" is not a number`);
  return undefined;
}

/**
 * Where the signals connect (a URL {@link redisUrlProblem} accepted, or the `redis` options' host
 * and port), and the passwords to keep out of messages.
 */
export function redisTarget(url: string | undefined, redis: RedisOptions = {}): RedisTarget {
  const secrets = typeof redis.password === "string" && redis.password ? [redis.password] : [];
  if (url === undefined) {
    const host = redis.host ?? "127.0.0.1";
    return { url: `redis://${host.includes(":") ? `[${host}]` : host}:${redis.port ?? 6379}`, secrets };
  }
  const parsed = new URL(url);
  if (parsed.password) secrets.push(parsed.password, decodeURIComponent(parsed.password));
  return { url: redactUrl(url), secrets };
}

/** Why Redis is not ready, from the last error a connection reported. */
export type NotReadyReason = "unreachable" | "authentication_failed";

/** What a connection error means; anything but `unreachable` does not go away by retrying. */
export function notReadyReason(error: Error | undefined): NotReadyReason {
  const message = error?.message ?? "";
  if (/WRONGPASS|NOAUTH|invalid password|AUTH <password> called without any password/i.test(message))
    return "authentication_failed";
  return "unreachable";
}

/** `message` with the target's passwords replaced by `***`. */
export function scrub(message: string, target: RedisTarget): string {
  let out = message;
  for (const secret of target.secrets) out = out.replaceAll(secret, "***");
  return out;
}
