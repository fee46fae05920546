import { backoffDelay } from "@openrath/core/backend";
import type { RunStoreV1 } from "../contract/run-store.js";
import type { DueDelivery } from "../contract/webhooks.js";
import { signWebhook, WEBHOOK_HEADERS } from "./webhook-signature.js";
import { webhookTargetRefusal } from "./webhook-target.js";

/** How webhooks are delivered. */
export interface WebhookDeliveryOptions {
  /** Attempts before a delivery is marked failed (default 8). */
  readonly maxAttempts?: number;
  /** The first retry's delay in milliseconds (default 2000); each next one doubles, up to an hour. */
  readonly retryBaseMs?: number;
  /** How long one attempt may take (default 10 000 ms). */
  readonly timeoutMs?: number;
  /** Deliveries taken per tick (default 16). */
  readonly batch?: number;
  /**
   * Deliver to internal addresses too: loopback, private, link-local (cloud metadata) and the
   * other ranges {@link webhookTargetRefusal} refuses (default false: such a delivery fails at
   * once, without a request, and is not retried).
   */
  readonly allowInternalTargets?: boolean;
}

/** The body of a delivery: the same bytes on every attempt. */
export function deliveryBody(due: DueDelivery): string {
  const { delivery } = due;
  return JSON.stringify({
    id: delivery.id,
    type: delivery.event,
    createdAt: new Date(delivery.createdAt).toISOString(),
    data: delivery.payload,
  });
}

/** One attempt: a POST of the body, signed; any 2xx is delivered. */
async function attempt(due: DueDelivery, timeoutMs: number): Promise<string | undefined> {
  const body = deliveryBody(due);
  const timestamp = Math.floor(Date.now() / 1000);
  try {
    const response = await fetch(due.url, {
      method: "POST",
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
      headers: {
        "content-type": "application/json",
        "user-agent": "openrath-webhooks/1",
        [WEBHOOK_HEADERS.id]: due.delivery.id,
        [WEBHOOK_HEADERS.timestamp]: String(timestamp),
        [WEBHOOK_HEADERS.signature]: signWebhook(due.secret, timestamp, body),
      },
    });
    await response.body?.cancel().catch(() => {});
    return response.status >= 200 && response.status < 300 ? undefined : `HTTP ${response.status}`;
  } catch (error) {
    return (error as Error).name === "TimeoutError"
      ? `no answer within ${timeoutMs} ms`
      : (error as Error).message;
  }
}

/**
 * Sends the due deliveries of the store's webhook outbox (`capabilities.webhooks`) and records
 * each attempt: what a worker does on its tick. At least once: a dispatcher that dies mid-send
 * leaves the delivery due again after its lease.
 *
 * @returns how many deliveries were attempted.
 */
export async function dispatchWebhooks(
  store: RunStoreV1,
  options: WebhookDeliveryOptions = {},
): Promise<number> {
  const webhooks = store.capabilities.webhooks ? store.webhooks : undefined;
  if (!webhooks) return 0;
  const maxAttempts = Math.max(1, options.maxAttempts ?? 8);
  const timeoutMs = Math.max(100, options.timeoutMs ?? 10_000);
  const baseMs = Math.max(1, options.retryBaseMs ?? 2000);
  const due = await webhooks.takeDue(Math.max(1, options.batch ?? 16), timeoutMs + 30_000);
  await Promise.all(
    due.map(async (item) => {
      const refused = await webhookTargetRefusal(item.url, options.allowInternalTargets === true);
      if (refused !== undefined) {
        await webhooks.recordAttempt(item.delivery.id, { ok: false, error: `refused: ${refused}` });
        return;
      }
      const error = await attempt(item, timeoutMs);
      const attempts = item.delivery.attempts + 1;
      await webhooks.recordAttempt(
        item.delivery.id,
        error === undefined
          ? { ok: true }
          : attempts >= maxAttempts
            ? { ok: false, error }
            : { ok: false, error, retryInMs: backoffDelay(attempts, { baseMs, maxMs: 3_600_000 }) },
      );
    }),
  );
  return due.length;
}
