import type { JsonObject } from "@openrath/core";
import type { AuditInput } from "./access.js";
import type { Page } from "./journal-records.js";
import type { PlanRecord, RunErrorInfo, SubmitInput } from "./run-records.js";

/**
 * A stored schedule: a workflow started by name on a cron expression. Times are epoch
 * milliseconds (database time where the store sets them).
 */
export interface ScheduleRecord {
  readonly id: string;
  readonly tenantId: string;
  /** The project the schedule's runs belong to, or `null` for none. */
  readonly projectId: string | null;
  /** The workflow's name, resolved to its deployed revision at each firing. */
  readonly workflow: string;
  /** The user message each firing's run starts from. */
  readonly input: string;
  /** Kept with each run the schedule starts (labels); never interpreted. */
  readonly metadata: JsonObject;
  /** A cron expression (five fields, or six with seconds first). */
  readonly cron: string;
  /** The IANA time zone the expression is read in, such as `Europe/Berlin` or `UTC`. */
  readonly timezone: string;
  readonly enabled: boolean;
  /** When the schedule fires next, or `null` when the expression has no future time. */
  readonly nextFireAt: number | null;
  /** The fire time of the last firing, or `null` before the first. */
  readonly lastFiredAt: number | null;
  /** The run the last firing started, or `null` (none yet, or the firing failed). */
  readonly lastRunId: string | null;
  /** Why the last firing started no run (the workflow is not deployed), or `null`. */
  readonly lastError: RunErrorInfo | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A schedule to store. The caller computes `nextFireAt` from the expression. */
export interface CreateScheduleInput {
  readonly tenantId: string;
  readonly projectId?: string | null;
  readonly workflow: string;
  readonly input: string;
  readonly metadata?: JsonObject;
  readonly cron: string;
  readonly timezone: string;
  /** Default `true`. */
  readonly enabled?: boolean;
  readonly nextFireAt: number | null;
  /** Written in the same transaction as the schedule. */
  readonly audit?: AuditInput;
}

/** A change of a schedule: absent fields keep their value. */
export interface UpdateScheduleInput {
  readonly workflow?: string;
  readonly input?: string;
  readonly metadata?: JsonObject;
  readonly cron?: string;
  readonly timezone?: string;
  readonly enabled?: boolean;
  /** Recomputed by the caller whenever the expression, the zone or `enabled` changes. */
  readonly nextFireAt?: number | null;
  /** Written in the same transaction as the change (not when there is no such schedule). */
  readonly audit?: AuditInput;
}

/** Filters of a schedule listing (by id, keyset-paginated). */
export interface ListSchedulesQuery {
  readonly tenantId: string;
  /** Only schedules of this project. */
  readonly projectId?: string;
  /** The `nextCursor` of the previous page. */
  readonly cursor?: string;
  /** 1..500, default 100. */
  readonly limit?: number;
}

/** One due firing, as `SchedulesV1.fireDue` hands it to its caller. */
export interface ScheduleFiring {
  readonly schedule: ScheduleRecord;
  /** The fire time that is due: the schedule's `nextFireAt`. */
  readonly fireAt: number;
  /** The database's clock at the firing. */
  readonly now: number;
  /**
   * The plan the schedule's workflow name points at now, read in the firing's transaction
   * (through the store's deployments), or `undefined` when the name is not deployed.
   */
  readonly plan: PlanRecord | undefined;
}

/** What the caller of `fireDue` makes of one firing. */
export interface FiringPlan {
  /**
   * The run to submit, in the firing's transaction. Its `idempotencyKey` must name the schedule
   * and the fire time ({@link scheduleIdempotencyKey}), so one firing never starts two runs.
   */
  readonly submit?: SubmitInput;
  /** Why the firing starts no run (kept as the schedule's `lastError`). */
  readonly error?: RunErrorInfo;
  /**
   * The next fire time: after `now`, not after `fireAt`, so firings missed while nothing ran are
   * fired once, not in a burst. `null` when the expression has no future time.
   */
  readonly nextFireAt: number | null;
}

/** What one `fireDue` call did. */
export interface FireResult {
  /** The runs the firings started (ids), in firing order. */
  readonly runIds: readonly string[];
  /** Firings that started no run (their plan gave an error). */
  readonly failed: number;
}

/** The idempotency key of a schedule's firing: the schedule's id and the fire time. */
export function scheduleIdempotencyKey(scheduleId: string, fireAt: number): string {
  return `schedule:${scheduleId}:${fireAt}`;
}

/**
 * Durable schedules, version 1 (`store.schedules` when `capabilities.schedules` is true): cron
 * schedules that start workflows by name, each firing exactly once across any number of workers.
 * The store keeps the expression as text; the caller (the runtime) parses it and computes fire
 * times, so the store needs no cron parser.
 *
 * Errors are `DurableError`s: `invalid_argument`.
 */
export interface SchedulesV1 {
  readonly specVersion: "v1";
  create(input: CreateScheduleInput): Promise<ScheduleRecord>;
  /** The tenant's schedule, or `undefined` (another tenant's included). */
  get(tenantId: string, scheduleId: string): Promise<ScheduleRecord | undefined>;
  list(query: ListSchedulesQuery): Promise<Page<ScheduleRecord>>;
  /** Changes the tenant's schedule; `undefined` when it has none with this id. */
  update(
    tenantId: string,
    scheduleId: string,
    patch: UpdateScheduleInput,
  ): Promise<ScheduleRecord | undefined>;
  /** Deletes the tenant's schedule; `false` when it has none with this id. */
  delete(tenantId: string, scheduleId: string, audit?: AuditInput): Promise<boolean>;
  /**
   * Fires up to `limit` due schedules (enabled, `nextFireAt` ≤ the database's now), each in its
   * own transaction: the schedule row is locked (`FOR UPDATE SKIP LOCKED`, so concurrent callers
   * take different schedules), `plan` says what the firing does, and its run is submitted and the
   * schedule advanced to `plan.nextFireAt` in that one transaction. When `plan` throws, the
   * transaction rolls back and the firing stays due (the next call tries again). `plan` runs
   * inside the transaction and must not call the store (an embedded store has one connection):
   * the firing brings what it needs.
   */
  fireDue(limit: number, plan: (firing: ScheduleFiring) => Promise<FiringPlan>): Promise<FireResult>;
  /** The earliest `nextFireAt` of any enabled schedule, or `null`: when a caller need look next. */
  nextDue(): Promise<number | null>;
}
