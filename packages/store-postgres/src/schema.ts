import type { ColumnType, Generated } from "kysely";

/**
 * The tables as the migrations in `migrations/` leave them (migration 9), for Kysely's query
 * builder. pg returns `bigint` as a string and PGlite as a number, so those columns read as both.
 */

/** A `bigint` column: written as a number, read as pg's string or PGlite's number. */
type Int8 = ColumnType<string | number, number | string, number | string>;
/** A nullable `bigint` column. */
type NullableInt8 = ColumnType<
  string | number | null,
  number | string | null | undefined,
  number | string | null
>;
/** A `bigint` column with a default. */
type GeneratedBigInt = ColumnType<string | number, number | string | undefined, number | string>;
/** A `timestamptz` column with a default of `now()`. */
type CreatedAt = ColumnType<Date, Date | string | undefined, Date | string>;
/** A nullable `timestamptz` column. */
type Timestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export interface PlansTable {
  hash: string;
  name: string;
  version: string;
  definition: string;
  created_at: CreatedAt;
}

export interface PlanVersionsTable {
  name: string;
  version: string;
  hash: string;
}

export interface DeploymentsTable {
  name: string;
  hash: string;
  previous: string | null;
  deployed_at: CreatedAt;
}

export interface RunsTable {
  id: string;
  tenant_id: string;
  session_id: string;
  plan_hash: string;
  workflow: string;
  status: string;
  version: GeneratedBigInt;
  priority: Generated<number>;
  idempotency_key: string | null;
  fingerprint: string;
  next_step: string | null;
  attempt: Generated<number>;
  not_before: CreatedAt;
  queued_at: CreatedAt;
  deadline: Timestamp;
  lease_holder: string | null;
  fencing_token: GeneratedBigInt;
  lease_expires_at: Timestamp;
  checkpoint_seq: Generated<number>;
  checkpoint_id: NullableInt8;
  event_seq: GeneratedBigInt;
  error: string | null;
  metadata: Generated<string>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
  ended_at: Timestamp;
  crashes: Generated<number>;
  /** Migration 7: set at submission, never changed. */
  project_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** Migration 10: the W3C trace context (`{ traceparent, tracestate? }`, jsonb), set at submission. */
  trace_context: ColumnType<unknown, string | null | undefined, string | null>;
}

export interface RunEventsTable {
  run_id: string;
  seq: Int8;
  type: string;
  data: string;
  at: CreatedAt;
}

export interface CheckpointsTable {
  id: GeneratedBigInt;
  run_id: string;
  base_id: GeneratedBigInt;
  created_at: CreatedAt;
  seq: number;
  event_seq: Generated<number>;
  step_id: Generated<string>;
  next_step: Generated<string>;
  body: Uint8Array;
}

export interface CheckpointArtifactsTable {
  checkpoint_id: Int8;
  tenant_id: string;
  digest: string;
}

export interface SessionHeadsTable {
  tenant_id: string;
  session_id: string;
  checkpoint_id: Int8;
}

export interface ChunksTable {
  tenant_id: string;
  id: string;
  body: string;
}

export interface TenantLimitsTable {
  tenant_id: string;
  max_running: number;
}

export interface JournalTable {
  run_id: string;
  checkpoint_seq: number;
  position: string;
  kind: "model" | "tool" | "call";
  fingerprint: string;
  label: string;
  result: string;
  fencing_token: Int8;
  at: CreatedAt;
  /** Migration 10: the trace and span of the live call, when it was traced. */
  trace_id: ColumnType<string | null, string | null | undefined, string | null>;
  span_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface EffectsTable {
  id: string;
  seq: GeneratedBigInt;
  run_id: string;
  tenant_id: string;
  checkpoint_seq: number;
  step_id: string;
  position: string;
  tool: string;
  call_id: string;
  effect: "read_only" | "idempotent" | "non_idempotent";
  idempotency_key: string | null;
  arguments_digest: string;
  arguments: string;
  status: "prepared" | "dispatched" | "succeeded" | "failed" | "needs_review";
  fencing_token: Int8;
  worker_id: string;
  dispatches: Generated<number>;
  outcome: string | null;
  resolution: string | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface InterruptsTable {
  id: string;
  seq: GeneratedBigInt;
  run_id: string;
  tenant_id: string;
  checkpoint_seq: number;
  step_id: string;
  position: string;
  fingerprint: string;
  kind: "approval" | "input" | "review";
  request: string;
  payload_schema: string | null;
  on_timeout: string | null;
  status: "pending" | "decided" | "expired";
  decision: string | null;
  created_at: CreatedAt;
  expires_at: Timestamp;
  decided_at: Timestamp;
}

/** Migration 7: API tokens, by the SHA-256 of their secret. */
export interface TokensTable {
  id: string;
  tenant_id: string;
  project_id: string | null;
  name: string;
  /** `text[]`: both drivers read it as an array of strings. */
  grants: ColumnType<string[], string[], string[]>;
  secret_hash: string;
  created_at: CreatedAt;
  expires_at: Timestamp;
  revoked_at: Timestamp;
}

/** Migration 7: the append-only audit log. */
export interface AuditTable {
  id: GeneratedBigInt;
  at: CreatedAt;
  tenant_id: string;
  actor: string;
  action: string;
  outcome: "allowed" | "denied" | "failed";
  resource_kind: string;
  resource_id: string | null;
  reason: string | null;
  request_id: string | null;
  /** `jsonb`: written as JSON text, read as the parsed object. */
  attributes: ColumnType<unknown, string | undefined, string>;
}

/** Migration 8: cron schedules. */
export interface SchedulesTable {
  id: string;
  tenant_id: string;
  project_id: string | null;
  workflow: string;
  input: string;
  /** `jsonb`: written as JSON text, read as the parsed object. */
  metadata: ColumnType<unknown, string | undefined, string>;
  cron: string;
  timezone: string;
  enabled: Generated<boolean>;
  next_fire_at: Timestamp;
  last_fired_at: Timestamp;
  last_run_id: string | null;
  /** `jsonb`: written as JSON text, read as the parsed object. */
  last_error: ColumnType<unknown, string | null | undefined, string | null>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

/** Migration 8: webhook endpoints (the secret signs; it is never read back out through the API). */
export interface WebhooksTable {
  id: string;
  tenant_id: string;
  project_id: string | null;
  url: string;
  secret: string;
  /** `text[]`: both drivers read it as an array of strings. */
  events: ColumnType<string[], string[], string[]>;
  enabled: Generated<boolean>;
  created_at: CreatedAt;
}

/** Migration 8: the webhook outbox, filled by the trigger on `runs`. */
export interface WebhookDeliveriesTable {
  id: string;
  webhook_id: string;
  tenant_id: string;
  event: string;
  run_id: string;
  payload: ColumnType<unknown, string, string>;
  status: Generated<"pending" | "delivered" | "failed">;
  attempts: Generated<number>;
  next_attempt_at: CreatedAt;
  last_error: string | null;
  created_at: CreatedAt;
  delivered_at: Timestamp;
}

/** Migration 9: messages queued behind a session's active run. */
export interface MessageQueueTable {
  id: string;
  tenant_id: string;
  project_id: string | null;
  session_id: string;
  workflow: string;
  input: string;
  metadata: ColumnType<unknown, string | undefined, string>;
  priority: Generated<number>;
  status: Generated<"pending" | "submitted" | "failed">;
  run_id: string | null;
  error: ColumnType<unknown, string | null | undefined, string | null>;
  visible_at: CreatedAt;
  created_at: CreatedAt;
}

/** The store's schema; queries name it with `withSchema`. */
export interface Database {
  plans: PlansTable;
  plan_versions: PlanVersionsTable;
  deployments: DeploymentsTable;
  runs: RunsTable;
  run_events: RunEventsTable;
  checkpoints: CheckpointsTable;
  checkpoint_artifacts: CheckpointArtifactsTable;
  session_heads: SessionHeadsTable;
  chunks: ChunksTable;
  tenant_limits: TenantLimitsTable;
  journal: JournalTable;
  effects: EffectsTable;
  interrupts: InterruptsTable;
  tokens: TokensTable;
  audit: AuditTable;
  schedules: SchedulesTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  message_queue: MessageQueueTable;
}
