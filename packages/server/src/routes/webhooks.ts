import { randomBytes } from "node:crypto";
import {
  type DeliveryRecord,
  WEBHOOK_EVENTS,
  type WebhookEvent,
  type WebhookRecord,
} from "@openrath/runtime-durable";
import type { WebhooksV1 } from "@openrath/runtime-durable/store";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Principal } from "../auth.js";
import { auditOf, principalOf, type ServerContext } from "../context.js";
import { ApiError, ErrorEnvelope, notFound } from "../errors.js";
import { limit, page } from "../schemas.js";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const Events = z.array(z.enum(WEBHOOK_EVENTS as unknown as [WebhookEvent, ...WebhookEvent[]]));

export const Webhook = z
  .object({
    id: z.string(),
    tenantId: z.string(),
    projectId: z.string().nullable(),
    url: z.string(),
    events: Events,
    enabled: z.boolean(),
    createdAt: z.string(),
  })
  .meta({ id: "Webhook" });

export const Delivery = z
  .object({
    id: z.string().describe("The same on every attempt (the `openrath-webhook-id` header)."),
    webhookId: z.string(),
    event: z.string(),
    runId: z.string(),
    payload: z.record(z.string(), z.unknown()),
    status: z.enum(["pending", "delivered", "failed"]),
    attempts: z.number().int(),
    nextAttemptAt: z.string(),
    lastError: z.string().nullable(),
    createdAt: z.string(),
    deliveredAt: z.string().nullable(),
  })
  .meta({ id: "WebhookDelivery" });

const webhookOut = (webhook: WebhookRecord): z.input<typeof Webhook> => ({
  ...webhook,
  events: [...webhook.events],
  createdAt: iso(webhook.createdAt)!,
});

const deliveryOut = (delivery: DeliveryRecord): z.input<typeof Delivery> => ({
  id: delivery.id,
  webhookId: delivery.webhookId,
  event: delivery.event,
  runId: delivery.runId,
  payload: delivery.payload,
  status: delivery.status,
  attempts: delivery.attempts,
  nextAttemptAt: iso(delivery.nextAttemptAt)!,
  lastError: delivery.lastError,
  createdAt: iso(delivery.createdAt)!,
  deliveredAt: iso(delivery.deliveredAt),
});

const CreateWebhook = z
  .object({
    url: z
      .url({ protocol: /^https?$/, error: "The URL must be http: or https:." })
      .max(2048)
      .describe("Where deliveries are POSTed (http or https)."),
    events: Events.min(1)
      .optional()
      .describe(
        "`run.ended` (succeeded, failed, cancelled, timed out), `run.parked` (waiting, needs_review); default both.",
      ),
  })
  .strict()
  .meta({ id: "CreateWebhook" });

const WebhookId = z.object({ webhookId: z.string().min(1).max(128) });

const errors = {
  400: ErrorEnvelope,
  401: ErrorEnvelope,
  403: ErrorEnvelope,
  404: ErrorEnvelope,
  501: ErrorEnvelope,
};

/**
 * Webhook endpoints of the caller's tenant (and project), and their deliveries: each run that
 * ends or parks is POSTed to them, signed (see ADR 0031), retried with backoff. Another tenant's
 * or project's webhook is 404.
 */
export const webhookRoutes =
  (context: ServerContext): FastifyPluginAsyncZod =>
  async (app) => {
    const { store } = context.runtime;
    const webhooks = (): WebhooksV1 => {
      const member = store.capabilities.webhooks ? store.webhooks : undefined;
      if (!member) throw new ApiError(501, "not_supported", "This store keeps no webhooks.");
      return member;
    };
    const visible = async (principal: Principal, webhookId: string) => {
      const webhook = await webhooks().getWebhook(principal.tenantId, webhookId);
      if (!webhook || (principal.projectId !== null && webhook.projectId !== principal.projectId))
        throw notFound("webhook", webhookId, "webhook_not_found");
      return webhook;
    };

    app.post(
      "/v1/webhooks",
      {
        config: { action: "webhook.write" },
        schema: {
          tags: ["webhooks"],
          summary: "Register a webhook; its signing secret is in this response only",
          body: CreateWebhook,
          response: { 201: z.object({ webhook: Webhook, secret: z.string() }), ...errors },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const secret = `whsec_${randomBytes(32).toString("base64url")}`;
        const webhook = await webhooks().createWebhook({
          tenantId: principal.tenantId,
          projectId: principal.projectId,
          url: request.body.url,
          secret,
          events: request.body.events ?? [...WEBHOOK_EVENTS],
          // The origin only: a URL's path or query may carry a credential of the receiver.
          audit: auditOf(request, "webhook", null, "allowed", {
            attributes: { origin: new URL(request.body.url).origin },
          }),
        });
        reply.status(201);
        return { webhook: webhookOut(webhook), secret };
      },
    );

    app.get(
      "/v1/webhooks",
      {
        config: { action: "webhook.read" },
        schema: {
          tags: ["webhooks"],
          summary: "List webhooks",
          response: { 200: z.object({ items: z.array(Webhook) }), ...errors },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const all = await webhooks().listWebhooks(principal.tenantId);
        return {
          items: all
            .filter((webhook) => principal.projectId === null || webhook.projectId === principal.projectId)
            .map(webhookOut),
        };
      },
    );

    app.get(
      "/v1/webhooks/:webhookId",
      {
        config: { action: "webhook.read" },
        schema: {
          tags: ["webhooks"],
          summary: "Read a webhook",
          params: WebhookId,
          response: { 200: Webhook, ...errors },
        },
      },
      async (request) => webhookOut(await visible(principalOf(request), request.params.webhookId)),
    );

    app.delete(
      "/v1/webhooks/:webhookId",
      {
        config: { action: "webhook.write" },
        schema: {
          tags: ["webhooks"],
          summary: "Delete a webhook and its deliveries",
          params: WebhookId,
          response: { 204: z.null(), ...errors },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const { webhookId } = request.params;
        await visible(principal, webhookId);
        await webhooks().deleteWebhook(principal.tenantId, webhookId, auditOf(request, "webhook", webhookId));
        reply.status(204);
        return null;
      },
    );

    app.get(
      "/v1/webhooks/:webhookId/deliveries",
      {
        config: { action: "webhook.read" },
        schema: {
          tags: ["webhooks"],
          summary: "List a webhook's deliveries, oldest first",
          params: WebhookId,
          querystring: z.object({
            status: z.enum(["pending", "delivered", "failed"]).optional(),
            runId: z.string().max(128).optional(),
            cursor: z.string().max(128).optional().describe("The `next` of the previous page."),
            limit: limit(200, 50),
          }),
          response: { 200: page(Delivery), ...errors },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const { webhookId } = request.params;
        await visible(principal, webhookId);
        const { status, runId, cursor, limit: count } = request.query;
        const found = await webhooks().listDeliveries({
          tenantId: principal.tenantId,
          webhookId,
          ...(status !== undefined ? { status } : {}),
          ...(runId !== undefined ? { runId } : {}),
          ...(cursor !== undefined ? { cursor } : {}),
          limit: count,
        });
        return { items: found.items.map(deliveryOut), next: found.nextCursor };
      },
    );
  };
