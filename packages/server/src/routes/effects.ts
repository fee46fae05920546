import type { EffectResolutionInput } from "@openrath/runtime-durable";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { auditOf, principalOf, type ServerContext, visibleByRun } from "../context.js";
import { ErrorEnvelope } from "../errors.js";
import { Effect, effectOut, inboxQuery, page, Run, runOut } from "../schemas.js";

const EffectId = z.object({ effectId: z.string().min(1).max(128) });
const errors = {
  400: ErrorEnvelope,
  401: ErrorEnvelope,
  403: ErrorEnvelope,
  404: ErrorEnvelope,
  409: ErrorEnvelope,
};

const Resolution = z
  .discriminatedUnion("kind", [
    z
      .object({ kind: z.literal("succeeded"), result: z.unknown(), reason: z.string().max(2000).optional() })
      .strict(),
    z.object({ kind: z.literal("failed"), reason: z.string().min(1).max(2000) }).strict(),
    z.object({ kind: z.literal("retry"), reason: z.string().max(2000).optional() }).strict(),
  ])
  .meta({ id: "Resolution" });

const STATUSES = ["prepared", "dispatched", "succeeded", "failed", "needs_review"] as const;

/** Effects under review (an ambiguous side effect parks its run) and their resolution one by one. */
export const effectRoutes =
  (context: ServerContext): FastifyPluginAsyncZod =>
  async (app) => {
    const { runtime } = context;

    const visible = async (request: Parameters<typeof principalOf>[0], effectId: string) => {
      const principal = principalOf(request);
      const record = await runtime.effects.get(effectId, { tenantId: principal.tenantId });
      return visibleByRun(context, principal, record, "effect", effectId);
    };

    app.get(
      "/v1/effects",
      {
        config: { action: "effect.read" },
        schema: {
          tags: ["effects"],
          summary: "Effects (default: those under review)",
          querystring: inboxQuery(STATUSES, "needs_review"),
          response: { 200: page(Effect), ...errors },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const { status, runId, cursor, limit: count } = request.query;
        const result = await runtime.effects.list({
          tenantId: principal.tenantId,
          ...(principal.projectId !== null ? { projectId: principal.projectId } : {}),
          status: status as never,
          ...(runId ? { runId } : {}),
          ...(cursor ? { cursor } : {}),
          limit: count,
        });
        return { items: result.items.map(effectOut), next: result.nextCursor };
      },
    );

    app.get(
      "/v1/effects/:effectId",
      {
        config: { action: "effect.read" },
        schema: { tags: ["effects"], params: EffectId, response: { 200: Effect, ...errors } },
      },
      async (request) => effectOut(await visible(request, request.params.effectId)),
    );

    app.post(
      "/v1/effects/:effectId/resolution",
      {
        config: { action: "effect.resolve" },
        schema: {
          tags: ["effects"],
          summary: "Resolve an effect under review; the run resumes when none is left",
          params: EffectId,
          body: Resolution,
          response: { 200: z.object({ effect: Effect, run: Run }), ...errors },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const { effectId } = request.params;
        await visible(request, effectId);
        const body = request.body;
        const resolution = { ...body, actor: principal.actor } as EffectResolutionInput;
        const result = await runtime.effects.resolve(effectId, resolution, {
          tenantId: principal.tenantId,
          audit: auditOf(request, "effect", effectId, "allowed", { attributes: { kind: body.kind } }),
        });
        return { effect: effectOut(result.effect), run: runOut(result.run) };
      },
    );
  };
