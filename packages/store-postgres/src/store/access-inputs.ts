import {
  type AuditInput,
  type CreateTokenInput,
  DurableError,
  type ListAuditQuery,
} from "@openrath/runtime-durable/store";
import * as z from "zod";

/** The most an audit record's `attributes` may take, as JSON text (UTF-8 bytes). */
export const MAX_AUDIT_ATTRIBUTES = 16 * 1024;

const text = (max: number) =>
  z
    .string({ error: `it must be a string of 1 to ${max} characters` })
    .min(1, `it must not be empty`)
    .max(max, `it must be at most ${max} characters`);
const optionalText = (max: number) => text(max).nullish();

/** A project id, as a run or a token names it. */
export const ProjectIdSchema = optionalText(256);

const AuditInputSchema = z.object({
  tenantId: text(256),
  actor: text(256),
  action: text(128),
  outcome: z.enum(["allowed", "denied", "failed"], { error: 'it must be "allowed", "denied" or "failed"' }),
  resourceKind: text(64),
  resourceId: optionalText(256),
  reason: optionalText(1024),
  requestId: optionalText(256),
  attributes: z
    .custom<Record<string, unknown>>(
      (value) => typeof value === "object" && value !== null && !Array.isArray(value),
      { error: "it must be a JSON object" },
    )
    .refine((value) => Buffer.byteLength(JSON.stringify(value)) <= MAX_AUDIT_ATTRIBUTES, {
      error: `it must be at most ${MAX_AUDIT_ATTRIBUTES} bytes as JSON`,
    })
    .optional(),
});

const CreateTokenSchema = z.object({
  tenantId: text(256),
  projectId: ProjectIdSchema,
  name: text(200),
  grants: z.array(text(128), { error: "it must be an array of grants" }).max(256),
  expiresAt: z.number({ error: "it must be epoch milliseconds" }).finite().nullish(),
  secretHash: z
    .string({ error: "it must be a SHA-256 in lower-case hex" })
    .regex(/^[0-9a-f]{64}$/, "it must be a SHA-256 in lower-case hex"),
});

const ListAuditSchema = z.object({
  tenantId: text(256),
  action: text(128).optional(),
  outcome: AuditInputSchema.shape.outcome.optional(),
  cursor: z
    .string({ error: "it must be the nextCursor of the previous page" })
    .regex(/^\d{1,18}$/, "it must be the nextCursor of the previous page")
    .optional(),
  limit: z
    .number({ error: "it must be an integer from 1 to 500" })
    .int("it must be an integer from 1 to 500")
    .min(1, "it must be an integer from 1 to 500")
    .max(500, "it must be an integer from 1 to 500")
    .optional(),
});

/** Checks `value` against `schema`; `invalid_argument` naming each offending field otherwise. */
function check<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const path = issue.path.length > 0 ? issue.path.join(".") : "the value";
    return `${path}: ${issue.message}`;
  });
  throw new DurableError("invalid_argument", `${what} is not valid: ${problems.join("; ")}.`, {
    details: { problems },
  });
}

/** The audit record to write, checked. @throws `invalid_argument`. */
export function checkAudit(audit: AuditInput): AuditInput {
  return check(AuditInputSchema, audit, "An audit record") as AuditInput;
}

/** A token to store, checked (its own `audit` apart). @throws `invalid_argument`. */
export function checkToken(input: CreateTokenInput): void {
  check(CreateTokenSchema, input, "A token");
  if (input.audit !== undefined) checkAudit(input.audit);
}

/** An audit listing's filters, checked. @throws `invalid_argument`. */
export function checkAuditQuery(query: ListAuditQuery): void {
  check(ListAuditSchema, query, "An audit listing");
}

/** A submission's project, checked. @throws `invalid_argument`. */
export function checkProjectId(projectId: unknown): void {
  check(ProjectIdSchema, projectId, "A project id");
}
