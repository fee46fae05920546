import type { JsonObject } from "@openrath/core";
import {
  type ChainContext,
  DurableError,
  type RunErrorInfo,
  type RunRecord,
  type RunStatus,
  type Signal,
  type TraceContext,
} from "@openrath/runtime-durable/store";
import { type Kysely, type RawBuilder, sql } from "kysely";
import type { Database } from "../schema.js";

/** What every query module needs: the database, the schema's tables and the notification channels. */
export interface StoreContext {
  readonly db: Kysely<Database>;
  readonly schema: string;
  readonly t: {
    readonly runs: RawBuilder<unknown>;
    readonly events: RawBuilder<unknown>;
    readonly checkpoints: RawBuilder<unknown>;
    readonly chunks: RawBuilder<unknown>;
    readonly plans: RawBuilder<unknown>;
    readonly limits: RawBuilder<unknown>;
    /** The newest checkpoint of each session id (what a new run's checkpoint 0 is encoded against). */
    readonly heads: RawBuilder<unknown>;
    /** The artifacts each checkpoint's claim-check stubs name. */
    readonly artifacts: RawBuilder<unknown>;
    /** The step journal (migration 2): a step commit drops the journal of the visits before it. */
    readonly journal: RawBuilder<unknown>;
    readonly checkpointIds: string;
  };
  /** NOTIFY channel names (schema-prefixed, so two schemas in one database do not cross-talk). */
  readonly channels: { readonly work: string; readonly cancel: string; readonly events: string };
  /**
   * What the checkpoints this store wrote or read last give the next one to compress against, by
   * checkpoint id (see `ChainContext`); a miss only costs compression.
   */
  readonly contexts: ContextCache;
  /**
   * When set, the frequent writes (submit, step commits, finishes, retries, releases, parks, events)
   * do not `NOTIFY` inside their transaction; their signals are handed here once it has committed.
   * PostgreSQL serializes the commits of all transactions that notify (a lock held until the commit
   * record is flushed), so notifying inside would make concurrent commits wait for each other's
   * flushes instead of sharing one. On PGlite the signals go to the listeners of the same
   * database in this process, without a statement.
   */
  readonly publish?: (signals: readonly Signal[]) => void;
  /**
   * Whether step commits that are not a run's end commit without waiting for the WAL flush
   * (`stepDurability: "relaxed"`, the default); see `StoreOptionsBase.stepDurability`.
   */
  readonly relaxedSteps: boolean;
  /**
   * Several processes share the database (a server): a claim brings the checkpoint of a fresh run
   * along (the submitted Session is rarely in the claiming process, so the worker would read it).
   */
  readonly multiProcess: boolean;
  /**
   * Resolves once the WAL holds, flushed, everything committed before the call: a write of its own
   * that waits for the flush (one in flight at a time, shared by every caller that arrived before
   * it started). See `submitRuns`.
   */
  readonly flushed: () => Promise<void>;
}

/** A bounded map of checkpoint id → chain context; the oldest entries go first. */
export class ContextCache {
  private readonly entries = new Map<number, ChainContext>();

  constructor(private readonly limit = 2048) {}

  get(id: number | null): ChainContext | undefined {
    return id === null ? undefined : this.entries.get(id);
  }

  set(id: number, context: ChainContext | undefined): void {
    if (context === undefined) return;
    this.entries.delete(id);
    if (this.entries.size >= this.limit) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(id, context);
  }
}

/**
 * A WAL flush shared by its callers: a transaction that writes a WAL record of its own (a
 * transactional logical message, which takes an id and is ignored by everything but logical
 * decoding) commits, `synchronous_commit` being on, only once the WAL is flushed up to it, which
 * covers every transaction committed before it began. (A transaction that only takes an id, such
 * as `select txid_current()`, writes no WAL before its commit record, and PostgreSQL commits it
 * without waiting for any flush.) A caller that arrives while one is in flight waits for the next
 * one (the one in flight may have begun before its commit).
 */
function walFlush(db: Kysely<Database>): () => Promise<void> {
  let current: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  const start = (): Promise<void> => {
    // Raw: on the submit path, whose statement texts stay as measured (ADR 0018, decision 1).
    const flush = sql`select pg_logical_emit_message(true, 'openrath.flush', '')`
      .execute(db)
      .then(() => {})
      .finally(() => {
        if (current === flush) current = undefined;
      });
    current = flush;
    return flush;
  };
  return () => {
    if (current === undefined) return start();
    queued ??= current
      .catch(() => {})
      .then(() => {
        queued = undefined;
        return start();
      });
    return queued;
  };
}

/** The query builder on `db` (the store's or a transaction) with the store's schema named. */
export function tables<D extends Kysely<Database>>(c: StoreContext, db: D = c.db as D): D {
  return db.withSchema(c.schema) as D;
}

/** Builds the context for `schema`. */
export function storeContext(
  db: Kysely<Database>,
  schema: string,
  publish?: (signals: readonly Signal[]) => void,
  relaxedSteps = true,
  multiProcess = false,
): StoreContext {
  const table = (name: string) => sql.table(`${schema}.${name}`) as unknown as RawBuilder<unknown>;
  return {
    db,
    schema,
    t: {
      runs: table("runs"),
      events: table("run_events"),
      checkpoints: table("checkpoints"),
      chunks: table("chunks"),
      plans: table("plans"),
      limits: table("tenant_limits"),
      heads: table("session_heads"),
      artifacts: table("checkpoint_artifacts"),
      journal: table("journal"),
      checkpointIds: `${schema}.checkpoint_ids`,
    },
    channels: { work: `${schema}_work`, cancel: `${schema}_cancel`, events: `${schema}_events` },
    contexts: new ContextCache(),
    relaxedSteps,
    multiProcess,
    flushed: walFlush(db),
    ...(publish ? { publish } : {}),
  };
}

const COLUMNS: readonly (keyof Database["runs"] & string)[] = [
  "id",
  "tenant_id",
  "session_id",
  "plan_hash",
  "workflow",
  "status",
  "version",
  "priority",
  "idempotency_key",
  "fingerprint",
  "next_step",
  "attempt",
  "not_before",
  "deadline",
  "lease_holder",
  "fencing_token",
  "lease_expires_at",
  "checkpoint_seq",
  "checkpoint_id",
  "event_seq",
  "error",
  "metadata",
  "created_at",
  "updated_at",
  "crashes",
  "project_id",
  "trace_context",
];

/**
 * The `runs` columns a {@link RunRecord} is made of, named one by one (with `alias.` in front when
 * given): a statement prepared with `*` would fail once a migration adds a column under it.
 */
export function runColumns(alias?: string): RawBuilder<unknown> {
  return sql.raw(COLUMNS.map((column) => (alias ? `${alias}.${column}` : column)).join(", "));
}

/** The `runs` columns of {@link runColumns}, for the query builder. */
export const RUN_COLUMN_NAMES = COLUMNS;

/** {@link runColumns} without an alias. */
export const RUN_COLUMNS = runColumns();

/** A `runs` row as the drivers return it (pg gives strings for bigint, PGlite numbers; both give Dates). */
export type RunRow = Record<string, unknown>;

const ms = (value: unknown): number | null => {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.getTime();
  return Date.parse(String(value));
};

function parseJson<T>(text: unknown, fallback: T): T {
  if (text === null || text === undefined) return fallback;
  if (typeof text !== "string") return text as T;
  return JSON.parse(text) as T;
}

/** The `traceContext` field of a run whose row has one (migration 10). */
function traceContextOf(value: unknown): { traceContext?: TraceContext } {
  const parsed = parseJson<TraceContext | null>(value, null);
  if (parsed === null || typeof parsed.traceparent !== "string") return {};
  return {
    traceContext:
      typeof parsed.tracestate === "string"
        ? { traceparent: parsed.traceparent, tracestate: parsed.tracestate }
        : { traceparent: parsed.traceparent },
  };
}

/** Maps a `runs` row to a {@link RunRecord}. */
export function toRun(row: RunRow): RunRecord {
  return {
    id: String(row.id),
    tenantId: String(row.tenant_id),
    projectId: (row.project_id as string | null | undefined) ?? null,
    sessionId: String(row.session_id),
    planHash: String(row.plan_hash),
    workflow: String(row.workflow),
    status: row.status as RunStatus,
    version: Number(row.version),
    priority: Number(row.priority),
    idempotencyKey: (row.idempotency_key as string | null) ?? null,
    fingerprint: String(row.fingerprint),
    nextStep: (row.next_step as string | null) ?? null,
    attempt: Number(row.attempt),
    notBefore: ms(row.not_before) ?? 0,
    deadline: ms(row.deadline),
    leaseHolder: (row.lease_holder as string | null) ?? null,
    fencingToken: Number(row.fencing_token),
    leaseExpiresAt: ms(row.lease_expires_at),
    checkpointSeq: Number(row.checkpoint_seq),
    checkpointId: Number(row.checkpoint_id ?? 0),
    eventSeq: Number(row.event_seq),
    error: parseJson<RunErrorInfo | null>(row.error, null),
    metadata: parseJson<JsonObject>(row.metadata, {}),
    ...traceContextOf(row.trace_context),
    createdAt: ms(row.created_at) ?? 0,
    updatedAt: ms(row.updated_at) ?? 0,
  };
}

/** Epoch milliseconds of a row value. */
export const toMs = ms;

/** Maps driver errors that mean "the database is not reachable" to `store_unavailable`. */
export function mapDriverError(error: unknown): unknown {
  if (DurableError.isInstance(error)) return error;
  const e = error as { code?: string; message?: string };
  const code = typeof e?.code === "string" ? e.code : "";
  // A value the database cannot hold (a NUL byte in text, a key too large for its index, a date
  // out of range): the caller's input, refused before anything was written. The runtime checks
  // its inputs first; this is the floor for direct callers of the store.
  if (REFUSED_VALUES.has(code)) {
    return new DurableError("invalid_argument", `The database refused a value: ${e?.message ?? code}.`, {
      cause: error,
      details: { code },
    });
  }
  const transient =
    [
      "ECONNREFUSED",
      "ECONNRESET",
      "EPIPE",
      "ETIMEDOUT",
      "57P01",
      "57P02",
      "57P03",
      "08000",
      "08003",
      "08006",
      "08001",
    ].includes(code) ||
    /Connection terminated|connection is closed|Client has encountered a connection error|terminating connection/i.test(
      e?.message ?? "",
    );
  if (!transient) return error;
  return new DurableError("store_unavailable", `The database is not reachable: ${e?.message ?? code}.`, {
    cause: error,
    details: { code, retryable: true },
  });
}

/**
 * SQLSTATEs of values refused for what they are: 22001 string too long, 22007/22008 a date or time
 * out of range or malformed, 22021 a byte sequence PostgreSQL text cannot hold (NUL), 22P05 an
 * untranslatable character, 54000 a value too large for an index.
 */
const REFUSED_VALUES = new Set(["22001", "22007", "22008", "22021", "22P05", "54000"]);

/** The `event` signal of a run's committed change. */
export function eventSignal(run: Pick<RunRecord, "id" | "eventSeq" | "status">): Signal {
  return { kind: "event", runId: run.id, seq: run.eventSeq, status: run.status };
}

/**
 * One statement of several runs' writes: each part's CTEs (named apart by a suffix of its own) and
 * its `select`, which tags the rows it returns with the part's index as `item`.
 */
export function grouped(
  parts: readonly { readonly ctes: RawBuilder<unknown>; readonly select: RawBuilder<unknown> }[],
): RawBuilder<RunRow & { item: number }> {
  // Raw: a `with` list of raw CTEs and a `union all` of their selects.
  return sql<RunRow & { item: number }>`
    with ${sql.join(
      parts.map((p) => p.ctes),
      sql`,
    `,
    )}
    ${sql.join(
      parts.map((p) => p.select),
      sql` union all `,
    )}`;
}
