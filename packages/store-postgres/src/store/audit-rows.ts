import type { JsonObject } from "@openrath/core";
import type { AuditInput, AuditRecord, TokenRecord } from "@openrath/runtime-durable/store";
import { type Kysely, type RawBuilder, sql } from "kysely";
import type { Database } from "../schema.js";
import { type StoreContext, tables, toMs } from "./context.js";

type Row = Record<string, unknown>;

/** An audit input as the `audit` table's columns (the id and the time are the database's). */
export function auditValues(audit: AuditInput, resourceId: string | null = null) {
  return {
    tenant_id: audit.tenantId,
    actor: audit.actor,
    action: audit.action,
    outcome: audit.outcome,
    resource_kind: audit.resourceKind,
    resource_id: audit.resourceId ?? resourceId,
    reason: audit.reason ?? null,
    request_id: audit.requestId ?? null,
    attributes: JSON.stringify(audit.attributes ?? {}),
  };
}

/** Appends `audit` through `db` (a transaction of the change it records). */
export async function insertAudit(
  c: StoreContext,
  db: Kysely<Database>,
  audit: AuditInput,
  resourceId: string | null,
): Promise<void> {
  await tables(c, db).insertInto("audit").values(auditValues(audit, resourceId)).execute();
}

/**
 * The body of a CTE that appends `audit` once per row of the CTE `src` (none when the change wrote
 * no row), with `id` of that row as the resource id when the input names none.
 */
export function auditCte(c: StoreContext, audit: AuditInput, src: RawBuilder<unknown>): RawBuilder<unknown> {
  const v = auditValues(audit);
  // Raw: a CTE of the enclosing raw statement, reading its `src` CTE.
  return sql`insert into ${sql.table(`${c.schema}.audit`)} (tenant_id, actor, action, outcome, resource_kind, resource_id, reason, request_id, attributes)
      select ${v.tenant_id}, ${v.actor}, ${v.action}, ${v.outcome}, ${v.resource_kind}, coalesce(${v.resource_id}::text, a.id::text),
        ${v.reason}::text, ${v.request_id}::text, ${v.attributes}::jsonb from ${src} a`;
}

/** An `audit` row as an {@link AuditRecord}. */
export function toAudit(row: Row): AuditRecord {
  const attributes = row.attributes;
  return {
    id: Number(row.id),
    at: toMs(row.at) ?? 0,
    tenantId: String(row.tenant_id),
    actor: String(row.actor),
    action: String(row.action),
    outcome: row.outcome as AuditRecord["outcome"],
    resourceKind: String(row.resource_kind),
    resourceId: (row.resource_id as string | null) ?? null,
    reason: (row.reason as string | null) ?? null,
    requestId: (row.request_id as string | null) ?? null,
    attributes: (typeof attributes === "string" ? JSON.parse(attributes) : (attributes ?? {})) as JsonObject,
  };
}

/** A `tokens` row as a {@link TokenRecord}. */
export function toToken(row: Row): TokenRecord {
  return {
    id: String(row.id),
    tenantId: String(row.tenant_id),
    projectId: (row.project_id as string | null) ?? null,
    name: String(row.name),
    grants: [...((row.grants as string[] | null) ?? [])],
    createdAt: toMs(row.created_at) ?? 0,
    expiresAt: toMs(row.expires_at),
    revokedAt: toMs(row.revoked_at),
  };
}
