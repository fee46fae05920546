import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { principalOf, type ServerContext } from "../context.js";
import { ApiError, ErrorEnvelope } from "../errors.js";
import { AuditEntry, auditOut, limit, page } from "../schemas.js";

/** The tenant's audit log: every mutation, denial and failed authentication, oldest first. */
export const auditRoutes =
  (context: ServerContext): FastifyPluginAsyncZod =>
  async (app) => {
    app.get(
      "/v1/audit",
      {
        config: { action: "audit.read" },
        schema: {
          tags: ["audit"],
          querystring: z.object({
            action: z.string().max(64).optional(),
            outcome: z.enum(["allowed", "denied", "failed"]).optional(),
            cursor: z.string().max(512).optional(),
            limit: limit(500, 100),
          }),
          response: { 200: page(AuditEntry), 401: ErrorEnvelope, 403: ErrorEnvelope, 501: ErrorEnvelope },
        },
      },
      async (request) => {
        if (!context.access) throw new ApiError(501, "not_supported", "This store keeps no audit log.");
        const principal = principalOf(request);
        const { action, outcome, cursor, limit: count } = request.query;
        const result = await context.access.listAudit({
          tenantId: principal.tenantId,
          ...(action ? { action } : {}),
          ...(outcome ? { outcome } : {}),
          ...(cursor ? { cursor } : {}),
          limit: count,
        });
        return { items: result.items.map(auditOut), next: result.nextCursor };
      },
    );
  };
