import type { JsonObject } from "@openrath/core";
import type { Audited } from "../contract/access.js";
import { DurableError } from "../contract/durable-error.js";
import type { Page } from "../contract/journal-records.js";
import type { RunStoreV1 } from "../contract/run-store.js";
import type { ListSchedulesQuery, ScheduleRecord, SchedulesV1 } from "../contract/schedules.js";
import { checkIdentifier, checkJsonObject, MAX_METADATA_BYTES, MAX_TENANT_ID } from "../internal/validate.js";
import type { OperatorScope } from "../interrupts/interrupt-operations.js";
import { firstFireTime } from "./cron.js";

/** The largest input a schedule keeps, in characters. */
const MAX_INPUT = 1_000_000;

/** A schedule to create (`runtime.schedules.create`). */
export interface NewSchedule {
  /** The workflow's name, resolved to its deployed revision at each firing. */
  readonly workflow: string;
  /** The user message each firing's run starts from. */
  readonly input: string;
  /** Five cron fields (minute first), or six with seconds first. */
  readonly cron: string;
  /** An IANA time zone (default `UTC`). */
  readonly timezone?: string;
  /** Default `true`. */
  readonly enabled?: boolean;
  /** Kept with each run the schedule starts. */
  readonly metadata?: JsonObject;
  /** The project the schedule and its runs belong to. */
  readonly projectId?: string;
}

/** A change of a schedule (`runtime.schedules.update`): absent fields keep their value. */
export type ScheduleChange = Partial<Omit<NewSchedule, "projectId">>;

function checkFields(fields: ScheduleChange): void {
  if (fields.workflow !== undefined) checkIdentifier("workflow", fields.workflow, 256);
  if (fields.input !== undefined && (typeof fields.input !== "string" || fields.input.length > MAX_INPUT))
    throw new DurableError(
      "invalid_argument",
      `A schedule's input is a string of at most ${MAX_INPUT} characters.`,
      {
        details: { option: "input" },
      },
    );
  if (fields.enabled !== undefined && typeof fields.enabled !== "boolean")
    throw new DurableError("invalid_argument", "A schedule's `enabled` is true or false.", {
      details: { option: "enabled" },
    });
  if (fields.metadata !== undefined) checkJsonObject("metadata", fields.metadata, MAX_METADATA_BYTES);
}

/**
 * The cron schedules of a runtime (`runtime.schedules`), on a store with
 * `capabilities.schedules`: each firing starts one run of the schedule's workflow, by name, on a
 * new session holding the schedule's input; the workers fire them (`DurableWorker`). Every call
 * is scoped to one tenant: another tenant's schedule is not found.
 *
 * @example
 * ```ts
 * await runtime.schedules.create({ workflow: "digest", input: "Summarize yesterday", cron: "0 7 * * *", timezone: "Europe/Berlin" });
 * ```
 */
export class ScheduleOperations {
  constructor(
    private readonly store: RunStoreV1,
    private readonly schedules: () => SchedulesV1,
    private readonly tenantId: string,
  ) {}

  private tenantOf(scope: OperatorScope | undefined): string {
    return scope?.tenantId === undefined
      ? this.tenantId
      : checkIdentifier("tenantId", scope.tenantId, MAX_TENANT_ID);
  }

  /**
   * Stores a schedule; its first firing is the expression's first time after now.
   *
   * @throws {DurableError} `invalid_cron` for an expression or zone that does not parse or never
   *   fires; `invalid_argument`; `not_supported` on a store without schedules.
   */
  async create(schedule: NewSchedule, scope: OperatorScope & Audited = {}): Promise<ScheduleRecord> {
    const schedules = this.schedules();
    checkFields(schedule);
    const timezone = schedule.timezone ?? "UTC";
    if (schedule.projectId !== undefined) checkIdentifier("projectId", schedule.projectId, MAX_TENANT_ID);
    const enabled = schedule.enabled ?? true;
    const first = firstFireTime(schedule.cron, timezone, await this.store.now());
    return schedules.create({
      tenantId: this.tenantOf(scope),
      projectId: schedule.projectId ?? null,
      workflow: schedule.workflow,
      input: schedule.input,
      metadata: schedule.metadata ?? {},
      cron: schedule.cron,
      timezone,
      enabled,
      nextFireAt: enabled ? first : null,
      ...(scope.audit === undefined ? {} : { audit: scope.audit }),
    });
  }

  /** The schedule, or `undefined` (another tenant's included). */
  async get(scheduleId: string, scope: OperatorScope = {}): Promise<ScheduleRecord | undefined> {
    return this.schedules().get(this.tenantOf(scope), scheduleId);
  }

  /** The tenant's schedules by id; pass `nextCursor` back as `cursor` for the next page. */
  async list(query: Partial<ListSchedulesQuery> = {}): Promise<Page<ScheduleRecord>> {
    return this.schedules().list({ ...query, tenantId: this.tenantOf(query) });
  }

  /**
   * Changes a schedule. A new expression, zone or `enabled: true` sets the next firing to the
   * expression's first time after now; `enabled: false` clears it.
   *
   * @throws {DurableError} `schedule_not_found` (another tenant's included), `invalid_cron`,
   *   `invalid_argument`.
   */
  async update(
    scheduleId: string,
    change: ScheduleChange,
    scope: OperatorScope & Audited = {},
  ): Promise<ScheduleRecord> {
    const schedules = this.schedules();
    checkFields(change);
    const tenantId = this.tenantOf(scope);
    const current = await schedules.get(tenantId, scheduleId);
    if (!current) throw notFound(scheduleId);
    const cron = change.cron ?? current.cron;
    const timezone = change.timezone ?? current.timezone;
    const enabled = change.enabled ?? current.enabled;
    const timing = change.cron !== undefined || change.timezone !== undefined || change.enabled !== undefined;
    const first = timing ? firstFireTime(cron, timezone, await this.store.now()) : undefined;
    const updated = await schedules.update(tenantId, scheduleId, {
      ...change,
      ...(first === undefined ? {} : { nextFireAt: enabled ? first : null }),
      ...(scope.audit === undefined ? {} : { audit: scope.audit }),
    });
    if (!updated) throw notFound(scheduleId);
    return updated;
  }

  /**
   * Deletes a schedule; firings in flight finish, no new one starts.
   *
   * @throws {DurableError} `schedule_not_found` (another tenant's included).
   */
  async delete(scheduleId: string, scope: OperatorScope & Audited = {}): Promise<void> {
    if (!(await this.schedules().delete(this.tenantOf(scope), scheduleId, scope.audit)))
      throw notFound(scheduleId);
  }
}

const notFound = (scheduleId: string) =>
  new DurableError("schedule_not_found", `No schedule ${JSON.stringify(scheduleId)}.`, {
    details: { scheduleId },
  });
