import { Session } from "@openrath/core";
import type { RunStatus as RunStatusName } from "@openrath/runtime-durable";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { auditOf, principalOf, type ServerContext, visibleRun } from "../context.js";
import { ApiError, ErrorEnvelope } from "../errors.js";
import { limit, page, Run, RunStatus, runOut } from "../schemas.js";

const RunId = z.object({ runId: z.string().min(1).max(128) });

const CreateRun = z
  .object({
    assistant: z
      .string()
      .min(1)
      .max(200)
      .describe("The workflow's name (its deployed revision) or a plan hash."),
    input: z.string().max(1_000_000).optional().describe("A user message to start from (or to append)."),
    session: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("A whole session as `Session.toJSON()` writes it, instead of `input`."),
    from: z
      .object({
        runId: z.string().min(1).max(128),
        sequence: z
          .number()
          .int()
          .min(0)
          .optional()
          .describe("A checkpoint of that run (default its latest)."),
      })
      .optional()
      .describe(
        "Fork the session of another run's checkpoint (time travel): `input`, if given, is appended.",
      ),
    merge: z
      .array(z.object({ runId: z.string().min(1).max(128), sequence: z.number().int().min(0).optional() }))
      .min(2)
      .max(16)
      .optional()
      .describe(
        "Merge the sessions of these runs' checkpoints (the shared prefix once, then each side): `input`, if given, is appended.",
      ),
    priority: z.number().int().min(-100).max(100).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    deadline: z.iso.datetime({ offset: true }).optional(),
  })
  .strict()
  .meta({ id: "CreateRun" });

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
  after: z.string().max(128).optional().describe("The `next` of the previous page."),
  limit: limit(200, 50),
});

const errors = {
  400: ErrorEnvelope,
  401: ErrorEnvelope,
  403: ErrorEnvelope,
  404: ErrorEnvelope,
  409: ErrorEnvelope,
};

/** Runs: create (with `Idempotency-Key`), read, list, cancel, and the session of a checkpoint. */
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
          headers: z.object({ "idempotency-key": z.string().min(1).max(256).optional() }),
          response: { 201: Run, ...errors, 429: ErrorEnvelope },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const body = request.body;
        let session: Session;
        const sources = [body.from, body.session, body.merge].filter((given) => given !== undefined);
        if (sources.length > 1)
          throw new ApiError(400, "invalid_request", "Give one of `from`, `merge` and `session`.");
        const checkpoint = async ({ runId, sequence }: { runId: string; sequence?: number | undefined }) => {
          await visibleRun(context, principal, runId);
          return runtime.session(runId, sequence, { tenantId: principal.tenantId });
        };
        if (body.from || body.merge) {
          if (body.from) {
            session = (await checkpoint(body.from)).fork();
          } else {
            const [first, ...rest] = await Promise.all((body.merge ?? []).map(checkpoint));
            session = rest.reduce((merged, next) => merged.merge(next), first as Session);
          }
          if (body.input !== undefined) session = session.append({ kind: "user", content: body.input });
        } else if (body.session) {
          if (body.input !== undefined)
            throw new ApiError(400, "invalid_request", "Give `session` or `input`, not both.");
          try {
            session = Session.fromJSON(body.session as never);
          } catch (error) {
            throw new ApiError(
              400,
              "invalid_request",
              `The session does not load: ${(error as Error).message}`,
            );
          }
        } else if (body.input !== undefined) {
          session = Session.fromUserMessage(body.input);
        } else {
          throw new ApiError(400, "invalid_request", "Give `input`, `session` or `from`.");
        }
        const idempotencyKey = request.headers["idempotency-key"];
        const run = await runtime.submit(body.assistant, session, {
          tenantId: principal.tenantId,
          ...(principal.projectId !== null ? { projectId: principal.projectId } : {}),
          ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
          ...(body.priority !== undefined ? { priority: body.priority } : {}),
          ...(body.metadata !== undefined ? { metadata: body.metadata as never } : {}),
          ...(body.deadline !== undefined ? { deadline: Date.parse(body.deadline) } : {}),
          audit: auditOf(request, "run", null, "allowed", {
            attributes: {
              assistant: body.assistant,
              ...(body.from ? { from: body.from.runId } : {}),
              ...(body.merge ? { merge: body.merge.map((source) => source.runId) } : {}),
            },
          }),
        });
        reply.status(201);
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
          querystring: ListRuns,
          response: { 200: page(Run), ...errors },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const { status, sessionId, after, limit: count } = request.query;
        const runs = await runtime.listRuns({
          tenantId: principal.tenantId,
          ...(principal.projectId !== null ? { projectId: principal.projectId } : {}),
          ...(status ? { status } : {}),
          ...(sessionId ? { sessionId } : {}),
          ...(after ? { after } : {}),
          limit: count,
        });
        return { items: runs.map(runOut), next: runs.length === count ? (runs.at(-1)?.id ?? null) : null };
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
          body: z
            .object({ reason: z.string().max(1000).optional() })
            .strict()
            .optional(),
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

    app.get(
      "/v1/runs/:runId/session",
      {
        config: { action: "session.read" },
        schema: {
          tags: ["runs"],
          summary: "The session of a run's checkpoint",
          params: RunId,
          querystring: z.object({ sequence: z.coerce.number().int().min(0).optional() }),
          response: { 200: z.record(z.string(), z.unknown()).meta({ id: "Session" }), ...errors },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        await visibleRun(context, principal, request.params.runId);
        const session = await runtime.session(request.params.runId, request.query.sequence, {
          tenantId: principal.tenantId,
        });
        return session.toJSON() as unknown as Record<string, unknown>;
      },
    );
  };
