import { randomUUID } from "node:crypto";
import type { JsonObject } from "@openrath/core";
import {
  DurableError,
  type FiringPlan,
  type RunErrorInfo,
  type ScheduleRecord,
  type SchedulesV1,
} from "@openrath/runtime-durable/store";
import { sql } from "kysely";
import { checkAudit } from "./access-inputs.js";
import { insertAudit } from "./audit-rows.js";
import { RUN_COLUMN_NAMES, type StoreContext, tables, toMs, toRun } from "./context.js";
import { isUuid } from "./ids.js";
import { insertRunWithin, publishesAfterCommit } from "./submit.js";

type Row = Record<string, unknown>;

const json = <T>(value: unknown): T => (typeof value === "string" ? JSON.parse(value) : value) as T;

/** A `schedules` row as a {@link ScheduleRecord}. */
function toSchedule(row: Row): ScheduleRecord {
  return {
    id: String(row.id),
    tenantId: String(row.tenant_id),
    projectId: (row.project_id as string | null) ?? null,
    workflow: String(row.workflow),
    input: String(row.input),
    metadata: json<JsonObject>(row.metadata ?? {}),
    cron: String(row.cron),
    timezone: String(row.timezone),
    enabled: row.enabled === true,
    nextFireAt: toMs(row.next_fire_at),
    lastFiredAt: toMs(row.last_fired_at),
    lastRunId: (row.last_run_id as string | null) ?? null,
    lastError: row.last_error == null ? null : json<RunErrorInfo>(row.last_error),
    createdAt: toMs(row.created_at) ?? 0,
    updatedAt: toMs(row.updated_at) ?? 0,
  };
}

const time = (ms: number | null | undefined) => (ms == null ? null : new Date(ms));

function checkTime(name: string, value: unknown): void {
  if (value !== null && (typeof value !== "number" || !Number.isFinite(value)))
    throw new DurableError("invalid_argument", `A schedule's ${name} is epoch milliseconds or null.`, {
      details: { option: name },
    });
}

/**
 * The store's {@link SchedulesV1}. A firing is one transaction: the due row locked with
 * `FOR UPDATE SKIP LOCKED`, the run inserted, the row advanced (ADR 0031).
 */
export function schedulesStore(c: StoreContext, run: <T>(work: () => Promise<T>) => Promise<T>): SchedulesV1 {
  return {
    specVersion: "v1",

    create: (input) =>
      run(async () => {
        checkTime("nextFireAt", input.nextFireAt);
        if (input.audit !== undefined) checkAudit(input.audit);
        return c.db.transaction().execute(async (tx) => {
          const row = await tables(c, tx)
            .insertInto("schedules")
            .values({
              id: randomUUID(),
              tenant_id: input.tenantId,
              project_id: input.projectId ?? null,
              workflow: input.workflow,
              input: input.input,
              metadata: JSON.stringify(input.metadata ?? {}),
              cron: input.cron,
              timezone: input.timezone,
              enabled: input.enabled ?? true,
              next_fire_at: time(input.nextFireAt),
            })
            .returningAll()
            .executeTakeFirstOrThrow();
          if (input.audit) await insertAudit(c, tx, input.audit, String(row.id));
          return toSchedule(row);
        });
      }),

    get: (tenantId, scheduleId) =>
      run(async () => {
        if (!isUuid(scheduleId)) return undefined;
        const row = await tables(c)
          .selectFrom("schedules")
          .selectAll()
          .where("id", "=", scheduleId)
          .where("tenant_id", "=", tenantId)
          .executeTakeFirst();
        return row ? toSchedule(row) : undefined;
      }),

    list: (query) =>
      run(async () => {
        const limit = Math.min(Math.max(query.limit ?? 100, 1), 500);
        const cursor = query.cursor;
        if (cursor !== undefined && !isUuid(cursor))
          throw new DurableError(
            "invalid_argument",
            "A schedule listing's cursor is the `nextCursor` of a page.",
          );
        const found = await tables(c)
          .selectFrom("schedules")
          .selectAll()
          .where("tenant_id", "=", query.tenantId)
          .$if(query.projectId !== undefined, (q) => q.where("project_id", "=", query.projectId!))
          .$if(cursor !== undefined, (q) => q.where("id", ">", cursor!))
          .orderBy("id")
          .limit(limit + 1)
          .execute();
        const rows = found.slice(0, limit);
        return {
          items: rows.map(toSchedule),
          nextCursor: found.length > limit ? String(rows[rows.length - 1]!.id) : null,
        };
      }),

    update: (tenantId, scheduleId, patch) =>
      run(async () => {
        if (patch.nextFireAt !== undefined) checkTime("nextFireAt", patch.nextFireAt);
        if (patch.audit !== undefined) checkAudit(patch.audit);
        if (!isUuid(scheduleId)) return undefined;
        return c.db.transaction().execute(async (tx) => {
          const row = await tables(c, tx)
            .updateTable("schedules")
            .set({
              ...(patch.workflow === undefined ? {} : { workflow: patch.workflow }),
              ...(patch.input === undefined ? {} : { input: patch.input }),
              ...(patch.metadata === undefined ? {} : { metadata: JSON.stringify(patch.metadata) }),
              ...(patch.cron === undefined ? {} : { cron: patch.cron }),
              ...(patch.timezone === undefined ? {} : { timezone: patch.timezone }),
              ...(patch.enabled === undefined ? {} : { enabled: patch.enabled }),
              ...(patch.nextFireAt === undefined ? {} : { next_fire_at: time(patch.nextFireAt) }),
              updated_at: sql`now()`,
            })
            .where("id", "=", scheduleId)
            .where("tenant_id", "=", tenantId)
            .returningAll()
            .executeTakeFirst();
          if (row && patch.audit) await insertAudit(c, tx, patch.audit, scheduleId);
          return row ? toSchedule(row) : undefined;
        });
      }),

    delete: (tenantId, scheduleId, audit) =>
      run(async () => {
        if (audit !== undefined) checkAudit(audit);
        if (!isUuid(scheduleId)) return false;
        return c.db.transaction().execute(async (tx) => {
          const row = await tables(c, tx)
            .deleteFrom("schedules")
            .where("id", "=", scheduleId)
            .where("tenant_id", "=", tenantId)
            .returning("id")
            .executeTakeFirst();
          if (row && audit) await insertAudit(c, tx, audit, scheduleId);
          return row !== undefined;
        });
      }),

    fireDue: (limit, plan) =>
      run(async () => {
        const runIds: string[] = [];
        let failed = 0;
        for (let i = 0; i < Math.max(1, Math.floor(limit)); i++) {
          const fired = await fireOne(c, plan);
          if (fired === undefined) break;
          if (fired.run) {
            runIds.push(fired.run.id);
            if (fired.created && publishesAfterCommit(c)) {
              try {
                c.publish?.([{ kind: "work", planHash: fired.run.planHash }]);
              } catch {
                // Signals are hints: the workers' sweep finds the run.
              }
            }
          } else failed++;
        }
        return { runIds, failed };
      }),

    nextDue: () =>
      run(async () => {
        const row = await tables(c)
          .selectFrom("schedules")
          .select((eb) => eb.fn.min("next_fire_at").as("next"))
          .where("enabled", "=", true)
          .where("next_fire_at", "is not", null)
          .executeTakeFirst();
        return toMs(row?.next ?? null);
      }),
  };
}

/**
 * One firing in one transaction, or `undefined` when no schedule is due (or every due one is
 * being fired by another caller). A run its idempotency key already names (the firing committed
 * before, under the same fire time) counts as this firing's run, never as a second one.
 */
async function fireOne(
  c: StoreContext,
  planOf: (firing: Parameters<Parameters<SchedulesV1["fireDue"]>[1]>[0]) => Promise<FiringPlan>,
): Promise<{ run: ReturnType<typeof toRun> | undefined; created: boolean } | undefined> {
  return c.db.transaction().execute(async (tx) => {
    const row = await tables(c, tx)
      .selectFrom("schedules")
      .selectAll()
      .select(sql<Date>`now()`.as("db_now"))
      .where("enabled", "=", true)
      .where("next_fire_at", "<=", sql<Date>`now()`)
      .orderBy("next_fire_at")
      .limit(1)
      .forUpdate()
      .skipLocked()
      .executeTakeFirst();
    if (!row) return undefined;
    const schedule = toSchedule(row);
    const fireAt = schedule.nextFireAt!;
    // The name's deployed revision now, in this transaction (the caller must not read the store).
    const deployed = await tables(c, tx)
      .selectFrom("deployments as d")
      .innerJoin("plans as p", "p.hash", "d.hash")
      .select(["p.hash", "p.name", "p.version", "p.definition"])
      .where("d.name", "=", schedule.workflow)
      .executeTakeFirst();
    const plan = deployed
      ? {
          hash: deployed.hash,
          name: deployed.name,
          version: deployed.version,
          definition: JSON.parse(deployed.definition) as JsonObject,
        }
      : undefined;
    const firing = { schedule, fireAt, now: toMs(row.db_now) ?? Date.now(), plan };
    const planned = await planOf(firing);
    let fired = undefined as ReturnType<typeof toRun> | undefined;
    let created = false;
    let error = planned.error ?? null;
    if (planned.submit) {
      fired = await insertRunWithin(c, tx, planned.submit);
      created = fired !== undefined;
      const key = planned.submit.idempotencyKey;
      if (!fired && key !== undefined) {
        const prior = await tables(c, tx)
          .selectFrom("runs")
          .select(RUN_COLUMN_NAMES)
          .where("tenant_id", "=", schedule.tenantId)
          .where("idempotency_key", "=", key)
          .executeTakeFirst();
        fired = prior ? toRun(prior) : undefined;
      }
      if (!fired)
        error = {
          code: "submit_refused",
          message: `The firing at ${new Date(fireAt).toISOString()} started no run: the store refused the submission (unknown plan or a taken session).`,
        };
    }
    checkTime("nextFireAt", planned.nextFireAt);
    await tables(c, tx)
      .updateTable("schedules")
      .set({
        next_fire_at: time(planned.nextFireAt),
        last_fired_at: new Date(fireAt),
        last_run_id: fired?.id ?? null,
        last_error: error === null ? null : JSON.stringify(error),
        updated_at: sql`now()`,
      })
      .where("id", "=", schedule.id)
      .execute();
    return { run: fired, created };
  });
}
