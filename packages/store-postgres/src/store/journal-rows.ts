import type { JsonObject, JsonValue, ToolOutcome } from "@openrath/core";
import {
  type DecisionRecord,
  DurableError,
  type EffectRecord,
  type EffectResolution,
  type InterruptRecord,
  type JournalEntry,
  type JournaledInterrupt,
  type LedgeredEffectClass,
} from "@openrath/runtime-durable/store";
import { type RawBuilder, sql } from "kysely";
import { type StoreContext, toMs } from "./context.js";

/** The journal's tables in the store's schema. */
export function journalTables(c: StoreContext) {
  const table = (name: string) => sql.table(`${c.schema}.${name}`) as unknown as RawBuilder<unknown>;
  return { journal: table("journal"), effects: table("effects"), interrupts: table("interrupts") };
}

type Row = Record<string, unknown>;

function json<T>(value: unknown, fallback: T): T {
  if (value === null || value === undefined) return fallback;
  return (typeof value === "string" ? JSON.parse(value) : value) as T;
}

/** A `journal` row (from a query or `row_to_json`) as a {@link JournalEntry}. */
export function toEntry(row: Row): JournalEntry {
  return {
    runId: String(row.run_id),
    checkpointSeq: Number(row.checkpoint_seq),
    position: String(row.position),
    kind: row.kind as JournalEntry["kind"],
    fingerprint: String(row.fingerprint),
    label: String(row.label),
    result: json<JsonValue>(row.result, null),
    fencingToken: Number(row.fencing_token),
    at: toMs(row.at) ?? 0,
    ...(typeof row.trace_id === "string" && typeof row.span_id === "string"
      ? { trace: { traceId: row.trace_id, spanId: row.span_id } }
      : {}),
  };
}

/** An `effects` row as an {@link EffectRecord}. */
export function toEffect(row: Row): EffectRecord {
  return {
    id: String(row.id),
    runId: String(row.run_id),
    tenantId: String(row.tenant_id),
    checkpointSeq: Number(row.checkpoint_seq),
    stepId: String(row.step_id),
    position: String(row.position),
    tool: String(row.tool),
    callId: String(row.call_id),
    effect: row.effect as LedgeredEffectClass,
    idempotencyKey: (row.idempotency_key as string | null) ?? null,
    argumentsDigest: String(row.arguments_digest),
    arguments: json<JsonValue>(row.arguments, null),
    status: row.status as EffectRecord["status"],
    fencingToken: Number(row.fencing_token),
    workerId: String(row.worker_id),
    dispatches: Number(row.dispatches),
    outcome: json<ToolOutcome | null>(row.outcome, null),
    resolution: json<EffectResolution | null>(row.resolution, null),
    createdAt: toMs(row.created_at) ?? 0,
    updatedAt: toMs(row.updated_at) ?? 0,
  };
}

/** An `interrupts` row as an operator's {@link InterruptRecord} (no positions or fingerprints). */
export function toInterrupt(row: Row): InterruptRecord {
  return {
    id: String(row.id),
    runId: String(row.run_id),
    tenantId: String(row.tenant_id),
    stepId: String(row.step_id),
    kind: row.kind as InterruptRecord["kind"],
    request: json<JsonValue>(row.request, null),
    schema: json<JsonObject | null>(row.payload_schema, null),
    hasTimeoutDefault: row.on_timeout !== null && row.on_timeout !== undefined,
    status: row.status as InterruptRecord["status"],
    decision: json<DecisionRecord | null>(row.decision, null),
    createdAt: toMs(row.created_at) ?? 0,
    expiresAt: toMs(row.expires_at),
    decidedAt: toMs(row.decided_at),
  };
}

/** An `interrupts` row with its journal position. */
export function toJournaledInterrupt(row: Row): JournaledInterrupt {
  return {
    ...toInterrupt(row),
    checkpointSeq: Number(row.checkpoint_seq),
    position: String(row.position),
    fingerprint: String(row.fingerprint),
  };
}

/** The opaque cursor after the row with `seq`. */
export function cursorOf(kind: "e" | "i", seq: unknown): string {
  return Buffer.from(`${kind}:${String(seq)}`).toString("base64url");
}

/**
 * The `seq` a cursor points after (0 without one).
 *
 * @throws {DurableError} `invalid_argument` for a cursor of another listing or a forged one.
 */
export function afterOf(kind: "e" | "i", cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  const text = typeof cursor === "string" ? Buffer.from(cursor, "base64url").toString() : "";
  const match = new RegExp(`^${kind}:(\\d{1,18})$`).exec(text);
  if (!match) {
    throw new DurableError(
      "invalid_argument",
      `Cursor ${JSON.stringify(cursor)} is not a cursor of this listing; pass the nextCursor of the previous page.`,
    );
  }
  return Number(match[1]);
}

/** A page size: 1..200, default 50. @throws `invalid_argument` otherwise. */
export function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 200) {
    throw new DurableError(
      "invalid_argument",
      `A page's limit must be an integer from 1 to 200, got ${limit}.`,
    );
  }
  return limit;
}
