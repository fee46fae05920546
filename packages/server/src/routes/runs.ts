import { OpenRathError } from "@openrath/core";
import {
  ACTIVE_STATUSES,
  parseTraceContext,
  type RunStatus as RunStatusName,
} from "@openrath/runtime-durable";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { auditOf, principalOf, type ServerContext, visibleRun } from "../context.js";
import { ApiError, ErrorEnvelope } from "../errors.js";
import { allows } from "../grants.js";
import { limit, page, Run, RunStatus, runOut, SessionBody, sessionOut } from "../schemas.js";
import { enqueueMessage, QueuedMessage } from "./queued-messages.js";
import { CreateRun, startingSession } from "./run-input.js";

const RunId = z.object({ runId: z.string().min(1).max(128) });

const ListRuns = z.object({
  status: z
    .string()
    .optional()
    .describe("Comma-separated statuses.")
    .transform((value, ctx) => {
      if (value === undefined) return undefined;
      const statuses = value.split(",").filter((status) => status !== "");
      for (const status of statuses) {
        if (!RunStatus.safeParse(status).success) {
          ctx.addIssue({ code: "custom", message: `Unknown run status "${status}".` });
          return z.NEVER;
        }
      }
      return statuses as RunStatusName[];
    }),
  sessionId: z.string().max(128).optional(),
  order: z
    .enum(["desc", "asc"])
    .default("desc")
    .describe("`desc` (default): newest first; `asc`: oldest first."),
  after: z.string().max(128).optional().describe("The `next` of the previous page (in the same `order`)."),
  limit: limit(200, 50),
});

/** An optional body with a reason; a request without a body (curl -X POST) is fine. */
const Reason = z
  .object({ reason: z.string().max(1000).optional() })
  .strict()
  .nullish();

const errors = {
  400: ErrorEnvelope,
  401: ErrorEnvelope,
  403: ErrorEnvelope,
  404: ErrorEnvelope,
  409: ErrorEnvelope,
};

/** Runs: create (with `Idempotency-Key`), read, list, cancel, resume, and the session of a checkpoint. */
export const runRoutes =
  (context: ServerContext): FastifyPluginAsyncZod =>
  async (app) => {
    const { runtime } = context;

    app.post(
      "/v1/runs",
      {
        config: { action: "run.create" },
        schema: {
          tags: ["runs"],
          summary: "Start a durable run",
          body: CreateRun,
          headers: z.object({
            "idempotency-key": z.string().min(1).max(256).optional(),
            traceparent: z
              .string()
              .max(256)
              .optional()
              .describe(
                "The caller's W3C trace context: the run's spans continue this trace (a malformed one is ignored).",
              ),
            tracestate: z
              .string()
              .max(1024)
              .optional()
              .describe("Vendor trace state sent with `traceparent`."),
          }),
          response: { 201: Run, 202: QueuedMessage, ...errors, 429: ErrorEnvelope, 501: ErrorEnvelope },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const body = request.body;
        const session = await startingSession(context, principal, body);
        const idempotencyKey = request.headers["idempotency-key"];
        const traceContext = parseTraceContext(request.headers.traceparent, request.headers.tracestate);
        const submit = () =>
          runtime.submit(body.assistant, session, {
            tenantId: principal.tenantId,
            ...(principal.projectId !== null ? { projectId: principal.projectId } : {}),
            ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
            ...(body.priority !== undefined ? { priority: body.priority } : {}),
            ...(body.metadata !== undefined ? { metadata: body.metadata as never } : {}),
            ...(body.deadline !== undefined ? { deadline: Date.parse(body.deadline) } : {}),
            ...(traceContext !== undefined ? { traceContext } : {}),
            audit: auditOf(request, "run", null, "allowed", {
              attributes: {
                assistant: body.assistant,
                ...(body.from ? { from: body.from.runId } : {}),
                ...(body.merge ? { merge: body.merge.map((source) => source.runId) } : {}),
                ...(body.sessionId ? { sessionId: body.sessionId } : {}),
              },
            }),
          });
        let run: Awaited<ReturnType<typeof submit>>;
        try {
          run = await submit();
        } catch (error) {
          if (body.ifBusy === "enqueue" && OpenRathError.isInstance(error, "session_busy")) {
            reply.status(202);
            return enqueueMessage(context, request, body);
          }
          if (body.ifBusy !== "interrupt" || !OpenRathError.isInstance(error, "session_busy")) throw error;
          if (!allows(principal.grants, "run.cancel"))
            throw new ApiError(
              403,
              "forbidden",
              'Interrupting the active run needs the grant "run.cancel".',
              {
                action: "run.cancel",
              },
            );
          // The session's active run gives way to the new message: cancel it, then submit once more.
          const active = await runtime.listRuns({
            tenantId: principal.tenantId,
            sessionId: session.id,
            status: [...ACTIVE_STATUSES],
            limit: 10,
          });
          for (const other of active) {
            await visibleRun(context, principal, other.id);
            await runtime
              .cancel(other.id, "interrupted by a new message to its session", {
                tenantId: principal.tenantId,
                audit: { ...auditOf(request, "run", other.id), action: "run.cancel" },
              })
              .catch((cancelError: unknown) => {
                // It ended on its own meanwhile: the slot is free either way.
                if (!OpenRathError.isInstance(cancelError, "invalid_transition")) throw cancelError;
              });
          }
          run = await submit();
        }
        reply.status(201);
        // The run's trace, as W3C Trace Context Level 2 names the response header.
        if (run.traceContext) reply.header("traceresponse", run.traceContext.traceparent);
        return runOut(run);
      },
    );

    app.get(
      "/v1/runs",
      {
        config: { action: "run.read" },
        schema: {
          tags: ["runs"],
          summary: "List runs",
          description:
            "Newest first (or oldest first with `order=asc`), a page at a time: `next` is the cursor of the following page, `null` on the last. Runs are paged by their time-ordered ids, so runs created while paging neither repeat nor push a run off the pages after.",
          querystring: ListRuns,
          response: { 200: page(Run), ...errors },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const { status, sessionId, order, after, limit: count } = request.query;
        // One more than the page tells whether another page follows.
        const runs = await runtime.listRuns({
          tenantId: principal.tenantId,
          ...(principal.projectId !== null ? { projectId: principal.projectId } : {}),
          ...(status ? { status } : {}),
          ...(sessionId ? { sessionId } : {}),
          ...(after ? { after } : {}),
          order,
          limit: count + 1,
        });
        const items = runs.slice(0, count);
        return { items: items.map(runOut), next: runs.length > count ? items.at(-1)!.id : null };
      },
    );

    app.get(
      "/v1/runs/:runId",
      {
        config: { action: "run.read" },
        schema: { tags: ["runs"], summary: "Read a run", params: RunId, response: { 200: Run, ...errors } },
      },
      async (request) => runOut(await visibleRun(context, principalOf(request), request.params.runId)),
    );

    app.post(
      "/v1/runs/:runId/cancel",
      {
        config: { action: "run.cancel" },
        schema: {
          tags: ["runs"],
          summary: "Cancel a run",
          params: RunId,
          body: Reason,
          response: { 200: Run, ...errors },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const { runId } = request.params;
        await visibleRun(context, principal, runId);
        const run = await runtime.cancel(runId, request.body?.reason, {
          tenantId: principal.tenantId,
          audit: auditOf(request, "run", runId),
        });
        return runOut(run);
      },
    );

    app.post(
      "/v1/runs/:runId/resume",
      {
        config: { action: "run.resume" },
        schema: {
          tags: ["runs"],
          summary: "Resume a run parked for review",
          description:
            "Puts a `needs_review` run back in the queue. Refused with 409 `effects_under_review` while any of its effects waits for a resolution (resolving the last one resumes the run by itself), and with 409 `invalid_transition` for a run in another status.",
          params: RunId,
          body: Reason,
          response: { 200: Run, ...errors },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const { runId } = request.params;
        await visibleRun(context, principal, runId);
        const run = await runtime.resume(runId, {
          tenantId: principal.tenantId,
          actor: principal.actor,
          ...(request.body?.reason !== undefined ? { reason: request.body.reason } : {}),
          audit: auditOf(request, "run", runId),
        });
        return runOut(run);
      },
    );

    app.get(
      "/v1/runs/:runId/session",
      {
        config: { action: "session.read" },
        schema: {
          tags: ["runs"],
          summary: "The session of a run's checkpoint",
          params: RunId,
          querystring: z.object({ sequence: z.coerce.number().int().min(0).optional() }),
          response: { 200: SessionBody, ...errors },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        await visibleRun(context, principal, request.params.runId);
        const session = await runtime.session(request.params.runId, request.query.sequence, {
          tenantId: principal.tenantId,
        });
        return sessionOut(session);
      },
    );
  };
