import { randomUUID } from "node:crypto";
import type { JsonObject } from "@openrath/core";
import {
  type DeliveryRecord,
  DurableError,
  WEBHOOK_EVENTS,
  type WebhookEvent,
  type WebhookRecord,
  type WebhooksV1,
} from "@openrath/runtime-durable/store";
import { sql } from "kysely";
import { checkAudit } from "./access-inputs.js";
import { insertAudit } from "./audit-rows.js";
import { type StoreContext, tables, toMs } from "./context.js";
import { isUuid } from "./ids.js";

type Row = Record<string, unknown>;

/** The most webhooks `listWebhooks` returns. */
const MAX_WEBHOOKS = 1000;

function toWebhook(row: Row): WebhookRecord {
  return {
    id: String(row.id),
    tenantId: String(row.tenant_id),
    projectId: (row.project_id as string | null) ?? null,
    url: String(row.url),
    events: [...((row.events as string[] | null) ?? [])] as WebhookEvent[],
    enabled: row.enabled === true,
    createdAt: toMs(row.created_at) ?? 0,
  };
}

function toDelivery(row: Row): DeliveryRecord {
  const payload = row.payload;
  return {
    id: String(row.id),
    webhookId: String(row.webhook_id),
    tenantId: String(row.tenant_id),
    event: row.event as WebhookEvent,
    runId: String(row.run_id),
    payload: (typeof payload === "string" ? JSON.parse(payload) : payload) as JsonObject,
    status: row.status as DeliveryRecord["status"],
    attempts: Number(row.attempts),
    nextAttemptAt: toMs(row.next_attempt_at) ?? 0,
    lastError: (row.last_error as string | null) ?? null,
    createdAt: toMs(row.created_at) ?? 0,
    deliveredAt: toMs(row.delivered_at),
  };
}

function checkWebhook(url: unknown, secret: unknown, events: unknown): void {
  let parsed: URL | undefined;
  try {
    parsed = typeof url === "string" && url.length <= 2048 ? new URL(url) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:"))
    throw new DurableError(
      "invalid_argument",
      `A webhook URL is an http: or https: URL, got ${JSON.stringify(url)}.`,
      {
        details: { option: "url" },
      },
    );
  if (typeof secret !== "string" || secret.length < 16 || secret.length > 256)
    throw new DurableError("invalid_argument", "A webhook secret is a string of 16 to 256 characters.", {
      details: { option: "secret" },
    });
  if (
    !Array.isArray(events) ||
    events.length === 0 ||
    events.some((event) => !WEBHOOK_EVENTS.includes(event as WebhookEvent))
  )
    throw new DurableError(
      "invalid_argument",
      `A webhook's events are one or more of ${WEBHOOK_EVENTS.join(", ")}, got ${JSON.stringify(events)}.`,
      { details: { option: "events" } },
    );
}

/**
 * The store's {@link WebhooksV1}. Deliveries are written by the trigger of migration 8 in the
 * transaction of the run's change (ADR 0031); this file registers endpoints and drains the outbox.
 */
export function webhooksStore(c: StoreContext, run: <T>(work: () => Promise<T>) => Promise<T>): WebhooksV1 {
  return {
    specVersion: "v1",

    createWebhook: (input) =>
      run(async () => {
        checkWebhook(input.url, input.secret, input.events);
        if (input.audit !== undefined) checkAudit(input.audit);
        return c.db.transaction().execute(async (tx) => {
          const row = await tables(c, tx)
            .insertInto("webhooks")
            .values({
              id: randomUUID(),
              tenant_id: input.tenantId,
              project_id: input.projectId ?? null,
              url: input.url,
              secret: input.secret,
              events: [...new Set(input.events)],
            })
            .returning(["id", "tenant_id", "project_id", "url", "events", "enabled", "created_at"])
            .executeTakeFirstOrThrow();
          if (input.audit) await insertAudit(c, tx, input.audit, String(row.id));
          return toWebhook(row);
        });
      }),

    getWebhook: (tenantId, webhookId) =>
      run(async () => {
        if (!isUuid(webhookId)) return undefined;
        const row = await tables(c)
          .selectFrom("webhooks")
          .select(["id", "tenant_id", "project_id", "url", "events", "enabled", "created_at"])
          .where("id", "=", webhookId)
          .where("tenant_id", "=", tenantId)
          .executeTakeFirst();
        return row ? toWebhook(row) : undefined;
      }),

    listWebhooks: (tenantId) =>
      run(async () => {
        const rows = await tables(c)
          .selectFrom("webhooks")
          .select(["id", "tenant_id", "project_id", "url", "events", "enabled", "created_at"])
          .where("tenant_id", "=", tenantId)
          .orderBy("created_at")
          .orderBy("id")
          .limit(MAX_WEBHOOKS)
          .execute();
        return rows.map(toWebhook);
      }),

    deleteWebhook: (tenantId, webhookId, audit) =>
      run(async () => {
        if (audit !== undefined) checkAudit(audit);
        if (!isUuid(webhookId)) return false;
        return c.db.transaction().execute(async (tx) => {
          const row = await tables(c, tx)
            .deleteFrom("webhooks")
            .where("id", "=", webhookId)
            .where("tenant_id", "=", tenantId)
            .returning("id")
            .executeTakeFirst();
          if (row && audit) await insertAudit(c, tx, audit, webhookId);
          return row !== undefined;
        });
      }),

    listDeliveries: (query) =>
      run(async () => {
        const limit = Math.min(Math.max(query.limit ?? 100, 1), 500);
        const { webhookId, runId, status, cursor } = query;
        if ((webhookId !== undefined && !isUuid(webhookId)) || (runId !== undefined && !isUuid(runId)))
          return { items: [], nextCursor: null };
        if (cursor !== undefined && !isUuid(cursor))
          throw new DurableError(
            "invalid_argument",
            "A delivery listing's cursor is the `nextCursor` of a page.",
          );
        const found = await tables(c)
          .selectFrom("webhook_deliveries")
          .selectAll()
          .where("tenant_id", "=", query.tenantId)
          .$if(webhookId !== undefined, (q) => q.where("webhook_id", "=", webhookId!))
          .$if(runId !== undefined, (q) => q.where("run_id", "=", runId!))
          .$if(status !== undefined, (q) => q.where("status", "=", status!))
          // Raw: a row comparison with the cursor's row, read in the database (its time has
          // microseconds, which a JavaScript time would lose).
          .$if(cursor !== undefined, (q) =>
            q.where(
              sql<boolean>`(created_at, id) > (select d.created_at, d.id from ${sql.table(`${c.schema}.webhook_deliveries`)} d where d.id = ${cursor})`,
            ),
          )
          .orderBy("created_at")
          .orderBy("id")
          .limit(limit + 1)
          .execute();
        const rows = found.slice(0, limit);
        return {
          items: rows.map(toDelivery),
          nextCursor: found.length > limit ? String(rows[rows.length - 1]!.id) : null,
        };
      }),

    takeDue: (limit, leaseMs) =>
      run(async () => {
        const count = Math.min(Math.max(Math.floor(limit), 1), 500);
        const lease = Math.max(1, Math.floor(leaseMs));
        // Raw: an update of the rows a locking subselect picked (materialized: a rescan of a
        // `SKIP LOCKED` subselect could pick other rows), joined to their webhooks.
        const result = await sql<Row>`
          with due as materialized (
            select d.id from ${sql.table(`${c.schema}.webhook_deliveries`)} d
            where d.status = 'pending' and d.next_attempt_at <= now()
            order by d.next_attempt_at limit ${count}
            for update skip locked
          ), taken as (
            update ${sql.table(`${c.schema}.webhook_deliveries`)} d
            set next_attempt_at = now() + ${lease} * interval '1 millisecond'
            from due where d.id = due.id
            returning d.*
          )
          select t.*, w.url as webhook_url, w.secret as webhook_secret
          from taken t join ${sql.table(`${c.schema}.webhooks`)} w on w.id = t.webhook_id
          order by t.created_at, t.id`.execute(c.db);
        return result.rows.map((row) => ({
          delivery: toDelivery(row),
          url: String(row.webhook_url),
          secret: String(row.webhook_secret),
        }));
      }),

    recordAttempt: (deliveryId, outcome) =>
      run(async () => {
        if (!isUuid(deliveryId)) return undefined;
        const retry = !outcome.ok && outcome.retryInMs !== undefined;
        const row = await tables(c)
          .updateTable("webhook_deliveries")
          .set((eb) => ({
            attempts: eb("attempts", "+", 1),
            status: outcome.ok ? "delivered" : retry ? "pending" : "failed",
            last_error: outcome.ok ? null : outcome.error.slice(0, 1000),
            ...(outcome.ok ? { delivered_at: sql`now()` } : {}),
            ...(retry
              ? {
                  next_attempt_at: sql`now() + ${Math.max(0, Math.floor(outcome.retryInMs!))} * interval '1 millisecond'`,
                }
              : {}),
          }))
          .where("id", "=", deliveryId)
          .where("status", "=", "pending")
          .returningAll()
          .executeTakeFirst();
        return row ? toDelivery(row) : undefined;
      }),
  };
}
