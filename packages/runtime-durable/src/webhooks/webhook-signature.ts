import { createHmac, timingSafeEqual } from "node:crypto";

/** The headers of a webhook delivery (see ADR 0031 for the scheme). */
export const WEBHOOK_HEADERS = Object.freeze({
  /** The delivery's id: the same on every attempt, so a receiver can drop repeats. */
  id: "openrath-webhook-id",
  /** Unix seconds when the attempt was signed. */
  timestamp: "openrath-webhook-timestamp",
  /** `v1=<hex>`: HMAC-SHA256 with the webhook's secret over `<timestamp>.<body>`. */
  signature: "openrath-webhook-signature",
});

/** The `v1=<hex>` signature of `body` sent at `timestamp` (unix seconds) with `secret`. */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  return `v1=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

/** Options of {@link verifyWebhook}. */
export interface VerifyWebhookOptions {
  readonly secret: string;
  /** The raw request body, exactly as received. */
  readonly body: string;
  /** The `openrath-webhook-timestamp` header. */
  readonly timestamp: string | undefined;
  /** The `openrath-webhook-signature` header (one or more `v1=` values, comma-separated). */
  readonly signature: string | undefined;
  /** How old (or how far ahead) the timestamp may be, in seconds (default 300). */
  readonly toleranceSeconds?: number;
  /** The receiver's clock, epoch milliseconds (default `Date.now()`). */
  readonly now?: number;
}

/**
 * Whether a delivery is genuine: its signature is the HMAC of its timestamp and body under the
 * webhook's secret, and the timestamp is recent (a replayed old delivery is refused).
 *
 * @example
 * ```ts
 * const ok = verifyWebhook({ secret, body: rawBody, timestamp: req.headers["openrath-webhook-timestamp"], signature: req.headers["openrath-webhook-signature"] });
 * ```
 */
export function verifyWebhook(options: VerifyWebhookOptions): boolean {
  const { secret, body, timestamp, signature } = options;
  if (!timestamp || !signature || !/^\d{1,12}$/.test(timestamp)) return false;
  const seconds = Number(timestamp);
  const now = (options.now ?? Date.now()) / 1000;
  if (Math.abs(now - seconds) > (options.toleranceSeconds ?? 300)) return false;
  const expected = Buffer.from(signWebhook(secret, seconds, body));
  return signature.split(",").some((given) => {
    const candidate = Buffer.from(given.trim());
    return candidate.length === expected.length && timingSafeEqual(candidate, expected);
  });
}
