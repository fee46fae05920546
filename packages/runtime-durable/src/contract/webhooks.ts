import type { JsonObject } from "@openrath/core";
import type { AuditInput } from "./access.js";
import type { Page } from "./journal-records.js";

/**
 * The run events a webhook can ask for: `run.ended` (succeeded, failed, cancelled, timed out) and
 * `run.parked` (waiting on an interrupt, or needs_review).
 */
export type WebhookEvent = "run.ended" | "run.parked";

/** Every {@link WebhookEvent}. */
export const WEBHOOK_EVENTS: readonly WebhookEvent[] = Object.freeze(["run.ended", "run.parked"]);

/** A stored webhook endpoint. The signing secret is never part of the record. */
export interface WebhookRecord {
  readonly id: string;
  readonly tenantId: string;
  /** Only runs of this project are delivered, or `null` for every run of the tenant. */
  readonly projectId: string | null;
  /** An `http:` or `https:` URL the deliveries are POSTed to. */
  readonly url: string;
  readonly events: readonly WebhookEvent[];
  readonly enabled: boolean;
  readonly createdAt: number;
}

/** A webhook to store. */
export interface CreateWebhookInput {
  readonly tenantId: string;
  readonly projectId?: string | null;
  readonly url: string;
  /** The HMAC-SHA256 key of the signatures: kept in the store (it signs), never given back. */
  readonly secret: string;
  readonly events: readonly WebhookEvent[];
  /** Written in the same transaction as the webhook. */
  readonly audit?: AuditInput;
}

/** Where a delivery stands. */
export type DeliveryStatus = "pending" | "delivered" | "failed";

/**
 * One delivery of one event to one webhook: written in the transaction of the run's change it
 * reports (the outbox), so a crash after the change still delivers it.
 */
export interface DeliveryRecord {
  readonly id: string;
  readonly webhookId: string;
  readonly tenantId: string;
  readonly event: WebhookEvent;
  readonly runId: string;
  /** What the event reports (the run's id, status, workflow, session, project, error). */
  readonly payload: JsonObject;
  readonly status: DeliveryStatus;
  /** Attempts made so far. */
  readonly attempts: number;
  /** When the next attempt is due (pending deliveries). */
  readonly nextAttemptAt: number;
  /** What the last failed attempt got (an HTTP status, a network error), or `null`. */
  readonly lastError: string | null;
  readonly createdAt: number;
  readonly deliveredAt: number | null;
}

/** A delivery taken for an attempt, with what the attempt needs. */
export interface DueDelivery {
  readonly delivery: DeliveryRecord;
  readonly url: string;
  readonly secret: string;
}

/** Filters of a delivery listing (oldest first, keyset-paginated). */
export interface ListDeliveriesQuery {
  readonly tenantId: string;
  readonly webhookId?: string;
  readonly runId?: string;
  readonly status?: DeliveryStatus;
  readonly cursor?: string;
  /** 1..500, default 100. */
  readonly limit?: number;
}

/** How an attempt went. */
export type AttemptOutcome =
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly error: string;
      /** Try again after this long; absent: the delivery has failed for good. */
      readonly retryInMs?: number;
    };

/**
 * Webhooks, version 1 (`store.webhooks` when `capabilities.webhooks` is true): endpoints a tenant
 * registers, and a durable outbox of deliveries. The store writes a delivery for each enabled
 * webhook of the run's tenant (and project) that asks for the event, in the same transaction as
 * the run's change that ends or parks it, whichever member makes the change (`finish`, `park`,
 * `cancel`, `sweep`, an interrupt's timeout...). A dispatcher takes due deliveries
 * ({@link takeDue}), sends them, and records each attempt: delivery is at least once.
 *
 * Errors are `DurableError`s: `invalid_argument`.
 */
export interface WebhooksV1 {
  readonly specVersion: "v1";
  createWebhook(input: CreateWebhookInput): Promise<WebhookRecord>;
  getWebhook(tenantId: string, webhookId: string): Promise<WebhookRecord | undefined>;
  /** The tenant's webhooks, oldest first (at most 1000). */
  listWebhooks(tenantId: string): Promise<WebhookRecord[]>;
  /** Deletes the tenant's webhook and its deliveries; `false` when it has none with this id. */
  deleteWebhook(tenantId: string, webhookId: string, audit?: AuditInput): Promise<boolean>;
  listDeliveries(query: ListDeliveriesQuery): Promise<Page<DeliveryRecord>>;
  /**
   * Takes up to `limit` pending deliveries that are due (database clock), skipping those another
   * dispatcher is taking (`FOR UPDATE SKIP LOCKED`), and hides each for `leaseMs` so no other
   * dispatcher sends it meanwhile; a dispatcher that dies holding one leaves it due again then.
   */
  takeDue(limit: number, leaseMs: number): Promise<DueDelivery[]>;
  /**
   * Records an attempt: delivered, due again after `retryInMs`, or failed for good. Counts the
   * attempt either way.
   */
  recordAttempt(deliveryId: string, outcome: AttemptOutcome): Promise<DeliveryRecord | undefined>;
}
