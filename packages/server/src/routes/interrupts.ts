import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { auditOf, principalOf, type ServerContext, visibleByRun } from "../context.js";
import { ErrorEnvelope } from "../errors.js";
import { Interrupt, inboxQuery, interruptOut, page, Run, runOut } from "../schemas.js";

const InterruptId = z.object({ interruptId: z.string().min(1).max(128) });
const errors = {
  400: ErrorEnvelope,
  401: ErrorEnvelope,
  403: ErrorEnvelope,
  404: ErrorEnvelope,
  409: ErrorEnvelope,
};

const Decision = z
  .object({
    kind: z.enum(["approve", "reject", "edit", "respond"]),
    reason: z.string().max(2000).optional(),
    payload: z
      .unknown()
      .optional()
      .describe("Required for `edit` and `respond`; checked against the interrupt's schema."),
  })
  .strict()
  .meta({ id: "Decision" });

/** The interrupt inbox (cursor-paged) and decisions, which resume the waiting run. */
export const interruptRoutes =
  (context: ServerContext): FastifyPluginAsyncZod =>
  async (app) => {
    const { runtime } = context;

    const visible = async (request: Parameters<typeof principalOf>[0], interruptId: string) => {
      const principal = principalOf(request);
      const record = await runtime.interrupts.get(interruptId, { tenantId: principal.tenantId });
      return visibleByRun(context, principal, record, "interrupt", interruptId);
    };

    app.get(
      "/v1/interrupts",
      {
        config: { action: "interrupt.read" },
        schema: {
          tags: ["interrupts"],
          summary: "The interrupt inbox",
          querystring: inboxQuery(["pending", "decided", "expired", "all"] as const, "pending"),
          response: { 200: page(Interrupt), ...errors },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const { status, runId, cursor, limit: count } = request.query;
        const result = await runtime.interrupts.list({
          tenantId: principal.tenantId,
          ...(principal.projectId !== null ? { projectId: principal.projectId } : {}),
          status: status as never,
          ...(runId ? { runId } : {}),
          ...(cursor ? { cursor } : {}),
          limit: count,
        });
        return { items: result.items.map(interruptOut), next: result.nextCursor };
      },
    );

    app.get(
      "/v1/interrupts/:interruptId",
      {
        config: { action: "interrupt.read" },
        schema: { tags: ["interrupts"], params: InterruptId, response: { 200: Interrupt, ...errors } },
      },
      async (request) => interruptOut(await visible(request, request.params.interruptId)),
    );

    app.post(
      "/v1/interrupts/:interruptId/decision",
      {
        config: { action: "interrupt.decide" },
        schema: {
          tags: ["interrupts"],
          summary: "Decide an interrupt; its run resumes where it asked",
          params: InterruptId,
          body: Decision,
          response: { 200: z.object({ interrupt: Interrupt, run: Run }), ...errors },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const { interruptId } = request.params;
        await visible(request, interruptId);
        const { kind, reason, payload } = request.body;
        const result = await runtime.interrupts.decide(
          interruptId,
          {
            kind,
            actor: principal.actor,
            ...(reason !== undefined ? { reason } : {}),
            ...(payload !== undefined ? { payload: payload as never } : {}),
          },
          {
            tenantId: principal.tenantId,
            audit: auditOf(request, "interrupt", interruptId, "allowed", { attributes: { kind } }),
          },
        );
        return { interrupt: interruptOut(result.interrupt), run: runOut(result.run) };
      },
    );
  };
