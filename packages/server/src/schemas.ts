import { CHUNK_KINDS, type Session, TRUST_LABELS, trustOf } from "@openrath/core";
import type {
  AuditRecord,
  EffectRecord,
  InterruptRecord,
  RunEvent,
  RunRecord,
  TokenRecord,
} from "@openrath/runtime-durable";
import { RUN_STATUSES } from "@openrath/runtime-durable";
import { z } from "zod";
import type { Principal } from "./auth.js";

// The API's own shapes: camelCase JSON, ISO 8601 times, no lease or fencing internals.

const iso = (ms: number): string => new Date(ms).toISOString();
const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));
const Time = z.string().describe("ISO 8601 time (UTC).");
const Json = z.unknown().describe("Any JSON value.");

export const RunStatus = z.enum(RUN_STATUSES as unknown as [string, ...string[]]).meta({ id: "RunStatus" });

export const Run = z
  .object({
    id: z.string(),
    tenantId: z.string(),
    projectId: z.string().nullable(),
    sessionId: z.string(),
    workflow: z.string(),
    planHash: z.string(),
    status: RunStatus,
    priority: z.number().int(),
    idempotencyKey: z.string().nullable(),
    nextStep: z.string().nullable(),
    attempt: z.number().int(),
    lastEventSequence: z.number().int(),
    lastCheckpoint: z.number().int(),
    deadline: Time.nullable(),
    error: z
      .object({
        code: z.string(),
        message: z.string(),
        stepId: z.string().optional(),
        retryable: z.boolean().optional(),
      })
      .nullable(),
    metadata: z.record(z.string(), Json),
    traceContext: z
      .object({ traceparent: z.string(), tracestate: z.string().optional() })
      .optional()
      .describe(
        "The W3C trace context the run continues (every step's spans are in this trace); absent when it has none.",
      ),
    createdAt: Time,
    updatedAt: Time,
  })
  .meta({ id: "Run" });

/** The API's shape of a run (as the routes return it). */
export function runOut(run: RunRecord): z.input<typeof Run> {
  return {
    id: run.id,
    tenantId: run.tenantId,
    projectId: (run as { projectId?: string | null }).projectId ?? null,
    sessionId: run.sessionId,
    workflow: run.workflow,
    planHash: run.planHash,
    status: run.status,
    priority: run.priority,
    idempotencyKey: run.idempotencyKey,
    nextStep: run.nextStep,
    attempt: run.attempt,
    lastEventSequence: run.eventSeq,
    lastCheckpoint: run.checkpointSeq,
    deadline: isoOrNull(run.deadline),
    error: run.error,
    metadata: run.metadata,
    ...(run.traceContext ? { traceContext: run.traceContext } : {}),
    createdAt: iso(run.createdAt),
    updatedAt: iso(run.updatedAt),
  };
}

export const Event = z
  .object({
    runId: z.string(),
    sequence: z.number().int().describe("Gap-free from 1 per run; the SSE `id`."),
    type: z.string(),
    data: Json,
    at: Time,
  })
  .meta({ id: "Event" });

/** The API's shape of an event (as the routes return it). */
export function eventOut(event: RunEvent): z.input<typeof Event> {
  return { runId: event.runId, sequence: event.seq, type: event.type, data: event.data, at: iso(event.at) };
}

export const TrustLabel = z
  .enum(TRUST_LABELS as unknown as [string, ...string[]])
  .describe(
    "Where a chunk's text came from: system (instructions, runtime records), user_input, model, tool_output, memory_recall, external (other outside text). Only system and user_input are vouched for.",
  )
  .meta({ id: "TrustLabel" });

export const Chunk = z
  .looseObject({
    id: z.string(),
    kind: z.enum(CHUNK_KINDS as unknown as [string, ...string[]]),
    author: z.string().optional(),
    createdAt: z.number().describe("Unix epoch milliseconds."),
    sessionId: z.string().describe("The branch that first appended the chunk."),
    trust: TrustLabel,
  })
  .describe(
    "One chunk as `Session.toJSON()` writes it (kind-specific fields beside these), with its trust label.",
  )
  .meta({ id: "Chunk" });

export const SessionBody = z
  .looseObject({
    format: z.literal("openrath.session"),
    version: z.literal(1),
    id: z.string(),
    chunks: z.array(Chunk),
    placement: z.object({ key: z.string(), spec: Json.optional() }).optional(),
    lineage: z.array(z.record(z.string(), Json)),
  })
  .describe("A session as `Session.toJSON()` writes it; every chunk also carries its derived `trust` label.")
  .meta({ id: "Session" });

/** The API's shape of a session: its JSON with each chunk's trust label (see core's `trustOf`). */
export function sessionOut(session: Session): z.input<typeof SessionBody> {
  const json = session.toJSON();
  const chunks = session.chunks;
  return {
    ...json,
    chunks: json.chunks.map((chunk, i) => ({ ...chunk, trust: trustOf(chunks[i]!) })),
  } as unknown as z.input<typeof SessionBody>;
}

export const Interrupt = z
  .object({
    id: z.string(),
    runId: z.string(),
    stepId: z.string(),
    kind: z.string(),
    status: z.string(),
    request: Json,
    schema: z.record(z.string(), Json).nullable().describe("JSON Schema a decision's payload must satisfy."),
    hasTimeoutDefault: z.boolean(),
    decision: Json.nullable(),
    createdAt: Time,
    expiresAt: Time.nullable(),
    decidedAt: Time.nullable(),
  })
  .meta({ id: "Interrupt" });

/** The API's shape of an interrupt (as the routes return it). */
export function interruptOut(record: InterruptRecord): z.input<typeof Interrupt> {
  return {
    id: record.id,
    runId: record.runId,
    stepId: record.stepId,
    kind: record.kind,
    status: record.status,
    request: record.request,
    schema: record.schema,
    hasTimeoutDefault: record.hasTimeoutDefault,
    decision: record.decision,
    createdAt: iso(record.createdAt),
    expiresAt: isoOrNull(record.expiresAt),
    decidedAt: isoOrNull(record.decidedAt),
  };
}

export const Effect = z
  .object({
    id: z.string(),
    runId: z.string(),
    stepId: z.string(),
    tool: z.string(),
    callId: z.string(),
    effect: z.string().describe("The tool's effect class."),
    idempotencyKey: z.string().nullable(),
    arguments: Json,
    status: z.string(),
    dispatches: z.number().int(),
    outcome: Json.nullable(),
    resolution: Json.nullable(),
    createdAt: Time,
    updatedAt: Time,
  })
  .meta({ id: "Effect" });

/** The API's shape of an effect (as the routes return it). */
export function effectOut(record: EffectRecord): z.input<typeof Effect> {
  return {
    id: record.id,
    runId: record.runId,
    stepId: record.stepId,
    tool: record.tool,
    callId: record.callId,
    effect: record.effect,
    idempotencyKey: record.idempotencyKey,
    arguments: record.arguments,
    status: record.status,
    dispatches: record.dispatches,
    outcome: record.outcome,
    resolution: record.resolution,
    createdAt: iso(record.createdAt),
    updatedAt: iso(record.updatedAt),
  };
}

export const Token = z
  .object({
    id: z.string(),
    tenantId: z.string(),
    projectId: z.string().nullable(),
    name: z.string(),
    grants: z.array(z.string()),
    createdAt: Time,
    expiresAt: Time.nullable(),
    revokedAt: Time.nullable(),
  })
  .meta({ id: "Token" });

/** The API's shape of a token (as the routes return it). */
export function tokenOut(token: TokenRecord): z.input<typeof Token> {
  return {
    id: token.id,
    tenantId: token.tenantId,
    projectId: token.projectId,
    name: token.name,
    grants: [...token.grants],
    createdAt: iso(token.createdAt),
    expiresAt: isoOrNull(token.expiresAt),
    revokedAt: isoOrNull(token.revokedAt),
  };
}

export const Whoami = z
  .object({
    kind: z.enum(["token", "jwt", "local"]).describe("How the request authenticated."),
    actor: z.string().describe("As audit records name it: `token:<id>`, `jwt:<subject>` or `local`."),
    tenantId: z.string(),
    projectId: z
      .string()
      .nullable()
      .describe("The one project it may see; `null` for every project of the tenant."),
    grants: z.array(z.string()).describe("The grants as the credentials hold them (`run.*`, `*`, ...)."),
    actions: z.array(z.string()).describe("Every action those grants allow."),
    expiresAt: Time.nullable().describe("When the credentials stop authenticating; `null` for never."),
    token: z
      .object({ id: z.string(), name: z.string(), createdAt: Time })
      .nullable()
      .describe("The store token presented (never its secret); `null` for a JWT or local mode."),
  })
  .meta({ id: "Whoami" });

/** The API's shape of the request's own credentials; `actions` are the ones its grants allow. */
export function whoamiOut(principal: Principal, actions: readonly string[]): z.input<typeof Whoami> {
  const { actor, token } = principal;
  return {
    kind: actor === "local" ? "local" : actor.startsWith("jwt:") ? "jwt" : "token",
    actor,
    tenantId: principal.tenantId,
    projectId: principal.projectId,
    grants: [...principal.grants],
    actions: [...actions],
    expiresAt: isoOrNull(principal.expiresAt ?? null),
    token: token ? { id: token.id, name: token.name, createdAt: iso(token.createdAt) } : null,
  };
}

export const AuditEntry = z
  .object({
    id: z.number().int(),
    at: Time,
    tenantId: z.string(),
    actor: z.string(),
    action: z.string(),
    outcome: z.enum(["allowed", "denied", "failed"]),
    resourceKind: z.string(),
    resourceId: z.string().nullable(),
    reason: z.string().nullable(),
    requestId: z.string().nullable(),
    attributes: z.record(z.string(), Json),
  })
  .meta({ id: "AuditEntry" });

/** The API's shape of an audit record (as the routes return it). */
export function auditOut(record: AuditRecord): z.input<typeof AuditEntry> {
  return { ...record, at: iso(record.at) };
}

/** A page of a list: `next` is the cursor of the next page, `null` on the last. */
export const page = <T extends z.ZodType>(item: T) =>
  z.object({ items: z.array(item), next: z.string().nullable() });

/** A list's `limit` query parameter. */
export const limit = (max: number, fallback: number) =>
  z.coerce.number().int().min(1).max(max).default(fallback).describe(`1..${max}, default ${fallback}.`);

/** The query of an inbox listing (interrupts, effects): a status, a run, a cursor, a page size. */
export const inboxQuery = <S extends readonly [string, ...string[]]>(statuses: S, fallback: S[number]) =>
  z.object({
    status: z.enum(statuses).default(fallback as never),
    runId: z.string().max(128).optional(),
    cursor: z.string().max(512).optional(),
    limit: limit(200, 50),
  });
