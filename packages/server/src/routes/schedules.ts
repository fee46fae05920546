import type { ScheduleRecord } from "@openrath/runtime-durable";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Principal } from "../auth.js";
import { auditOf, principalOf, type ServerContext } from "../context.js";
import { ApiError, ErrorEnvelope, notFound } from "../errors.js";
import { limit, page } from "../schemas.js";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export const Schedule = z
  .object({
    id: z.string(),
    tenantId: z.string(),
    projectId: z.string().nullable(),
    assistant: z.string().describe("The workflow's name, resolved to its deployed revision at each firing."),
    input: z.string().describe("The user message each firing's run starts from."),
    cron: z.string(),
    timezone: z.string(),
    enabled: z.boolean(),
    metadata: z.record(z.string(), z.unknown()),
    nextFireAt: z.string().nullable().describe("ISO 8601 time (UTC) of the next firing; null when disabled."),
    lastFiredAt: z.string().nullable(),
    lastRunId: z.string().nullable(),
    lastError: z.object({ code: z.string(), message: z.string() }).nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: "Schedule" });

function scheduleOut(schedule: ScheduleRecord): z.input<typeof Schedule> {
  return {
    id: schedule.id,
    tenantId: schedule.tenantId,
    projectId: schedule.projectId,
    assistant: schedule.workflow,
    input: schedule.input,
    cron: schedule.cron,
    timezone: schedule.timezone,
    enabled: schedule.enabled,
    metadata: schedule.metadata,
    nextFireAt: iso(schedule.nextFireAt),
    lastFiredAt: iso(schedule.lastFiredAt),
    lastRunId: schedule.lastRunId,
    lastError: schedule.lastError
      ? { code: schedule.lastError.code, message: schedule.lastError.message }
      : null,
    createdAt: iso(schedule.createdAt)!,
    updatedAt: iso(schedule.updatedAt)!,
  };
}

const fields = {
  assistant: z
    .string()
    .min(1)
    .max(200)
    .describe("The workflow's name (its deployed revision at each firing)."),
  input: z.string().max(1_000_000).describe("The user message each firing's run starts from."),
  cron: z
    .string()
    .min(1)
    .max(256)
    .describe(
      "Five fields (minute hour day-of-month month day-of-week) or six with seconds first; a bad one is 400 `invalid_cron`.",
    ),
  timezone: z.string().min(1).max(64).describe("An IANA time zone (default `UTC`)."),
  enabled: z.boolean(),
  metadata: z.record(z.string(), z.unknown()).describe("Kept with each run the schedule starts."),
};

const CreateSchedule = z
  .object({
    assistant: fields.assistant,
    input: fields.input,
    cron: fields.cron,
    timezone: fields.timezone.optional(),
    enabled: fields.enabled.optional(),
    metadata: fields.metadata.optional(),
  })
  .strict()
  .meta({ id: "CreateSchedule" });

const UpdateSchedule = z
  .object({
    assistant: fields.assistant.optional(),
    input: fields.input.optional(),
    cron: fields.cron.optional(),
    timezone: fields.timezone.optional(),
    enabled: fields.enabled.optional(),
    metadata: fields.metadata.optional(),
  })
  .strict()
  .meta({ id: "UpdateSchedule" });

const ScheduleId = z.object({ scheduleId: z.string().min(1).max(128) });

const errors = {
  400: ErrorEnvelope,
  401: ErrorEnvelope,
  403: ErrorEnvelope,
  404: ErrorEnvelope,
  501: ErrorEnvelope,
};

/**
 * Cron schedules of the caller's tenant (and project): each firing starts one run of the
 * schedule's assistant, once across all workers. Another tenant's or project's schedule is 404.
 */
export const scheduleRoutes =
  (context: ServerContext): FastifyPluginAsyncZod =>
  async (app) => {
    const { runtime } = context;
    const scope = (principal: Principal) => ({ tenantId: principal.tenantId });
    const visible = async (principal: Principal, scheduleId: string) => {
      const schedule = await runtime.schedules.get(scheduleId, scope(principal));
      if (!schedule || (principal.projectId !== null && schedule.projectId !== principal.projectId))
        throw notFound("schedule", scheduleId, "schedule_not_found");
      return schedule;
    };
    /** A name the store does not resolve would never fire: refused up front. */
    const deployed = async (assistant: string) => {
      const deployments = runtime.store.capabilities.deployments ? runtime.store.deployments : undefined;
      if (deployments && !(await deployments.current(assistant)))
        throw new ApiError(404, "unknown_plan", `No assistant ${JSON.stringify(assistant)} is deployed.`, {
          workflow: assistant,
        });
    };

    app.post(
      "/v1/schedules",
      {
        config: { action: "schedule.write" },
        schema: {
          tags: ["schedules"],
          summary: "Create a cron schedule",
          body: CreateSchedule,
          response: { 201: Schedule, ...errors },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const { assistant, ...rest } = request.body;
        await deployed(assistant);
        const schedule = await runtime.schedules.create(
          {
            workflow: assistant,
            input: rest.input,
            cron: rest.cron,
            ...(rest.timezone !== undefined ? { timezone: rest.timezone } : {}),
            ...(rest.enabled !== undefined ? { enabled: rest.enabled } : {}),
            ...(rest.metadata !== undefined ? { metadata: rest.metadata as never } : {}),
            ...(principal.projectId !== null ? { projectId: principal.projectId } : {}),
          },
          {
            ...scope(principal),
            audit: auditOf(request, "schedule", null, "allowed", {
              attributes: { assistant, cron: rest.cron },
            }),
          },
        );
        reply.status(201);
        return scheduleOut(schedule);
      },
    );

    app.get(
      "/v1/schedules",
      {
        config: { action: "schedule.read" },
        schema: {
          tags: ["schedules"],
          summary: "List schedules",
          querystring: z.object({
            cursor: z.string().max(128).optional().describe("The `next` of the previous page."),
            limit: limit(200, 50),
          }),
          response: { 200: page(Schedule), ...errors },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const { cursor, limit: count } = request.query;
        const found = await runtime.schedules.list({
          ...scope(principal),
          ...(principal.projectId !== null ? { projectId: principal.projectId } : {}),
          ...(cursor !== undefined ? { cursor } : {}),
          limit: count,
        });
        return { items: found.items.map(scheduleOut), next: found.nextCursor };
      },
    );

    app.get(
      "/v1/schedules/:scheduleId",
      {
        config: { action: "schedule.read" },
        schema: {
          tags: ["schedules"],
          summary: "Read a schedule",
          params: ScheduleId,
          response: { 200: Schedule, ...errors },
        },
      },
      async (request) => scheduleOut(await visible(principalOf(request), request.params.scheduleId)),
    );

    app.patch(
      "/v1/schedules/:scheduleId",
      {
        config: { action: "schedule.write" },
        schema: {
          tags: ["schedules"],
          summary: "Change a schedule",
          description:
            "A new `cron`, `timezone` or `enabled: true` sets the next firing to the expression's first time after now.",
          params: ScheduleId,
          body: UpdateSchedule,
          response: { 200: Schedule, ...errors },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const { scheduleId } = request.params;
        await visible(principal, scheduleId);
        const { assistant, metadata, ...rest } = request.body;
        if (assistant !== undefined) await deployed(assistant);
        const changed = Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== undefined));
        const schedule = await runtime.schedules.update(
          scheduleId,
          {
            ...changed,
            ...(assistant !== undefined ? { workflow: assistant } : {}),
            ...(metadata !== undefined ? { metadata: metadata as never } : {}),
          },
          {
            ...scope(principal),
            audit: auditOf(request, "schedule", scheduleId, "allowed", {
              attributes: { change: Object.keys(request.body) },
            }),
          },
        );
        return scheduleOut(schedule);
      },
    );

    app.delete(
      "/v1/schedules/:scheduleId",
      {
        config: { action: "schedule.write" },
        schema: {
          tags: ["schedules"],
          summary: "Delete a schedule",
          params: ScheduleId,
          response: { 204: z.null(), ...errors },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const { scheduleId } = request.params;
        await visible(principal, scheduleId);
        await runtime.schedules.delete(scheduleId, {
          ...scope(principal),
          audit: { ...auditOf(request, "schedule", scheduleId), attributes: { deleted: true } },
        });
        reply.status(204);
        return null;
      },
    );
  };
