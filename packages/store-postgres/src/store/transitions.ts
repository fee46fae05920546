import type { JsonValue } from "@openrath/core";
import {
  type AuditInput,
  assertTransition,
  type CheckpointWrite,
  DurableError,
  type EventInput,
  type Fence,
  isTerminal,
  PREVIOUS_CHECKPOINT,
  type RunErrorInfo,
  type RunRecord,
  type RunStatus,
  type SweepResult,
  sourcesOf,
} from "@openrath/runtime-durable/store";
import { type RawBuilder, sql } from "kysely";
import { auditCte } from "./audit-rows.js";
import {
  type CheckpointValues,
  checkpointValues,
  insertArtifacts,
  insertCheckpoint,
  upsertHead,
} from "./chunk-rows.js";
import {
  eventSignal,
  RUN_COLUMN_NAMES,
  type RunRow,
  runColumns,
  type StoreContext,
  tables,
  toRun,
} from "./context.js";
import { diagnose, fenceGuard, notFound } from "./fencing.js";
import { isUuid } from "./ids.js";
import { journalTables } from "./journal-rows.js";

/** SQL list of the statuses the table allows to reach `to`. */
function from(to: RunStatus) {
  return sql.join(sourcesOf(to).map((s) => sql.lit(s)));
}

/**
 * The CTEs writing a checkpoint for the row in `src` (the run row as updated, or a batch's source
 * row; see {@link insertCheckpoint}), named with `suffix`, and, when `head`, moving its session's head.
 */
export function checkpointCtes(
  c: StoreContext,
  cp: CheckpointValues,
  src: RawBuilder<unknown>,
  suffix: string,
  head = true,
  event = true,
) {
  const name = (base: string) => sql.raw(`${base}${suffix}`);
  // Raw: CTEs of the enclosing raw statement, reading its `src` CTE.
  return sql`,
    ${name("cp")} as (${insertCheckpoint(c, cp, src, event)}),
    ${name("ca")} as (${insertArtifacts(c, cp, src)})${
      head
        ? sql`,
    ${name("hd")} as (${upsertHead(c, cp, src)})`
        : sql``
    }`;
}

/**
 * The `nt` CTE notifying the run's event (and, with `work`, a work signal) inside the statement,
 * or nothing when the store publishes after commit (`c.publish`; the caller then calls
 * {@link published}).
 */
function notifyEvent(c: StoreContext, work = false) {
  if (c.publish)
    return sql`,
    nt as (select 1 from upd where false)`;
  return sql`,
    nt as (select pg_notify(${c.channels.events}, upd.id || ':' || upd.event_seq || ':' || upd.status) from upd
      ${work ? sql`union all select pg_notify(${c.channels.work}, upd.plan_hash) from upd` : sql``})`;
}

function eventAndNotify(c: StoreContext, type: string, data: RawBuilder<unknown> | string, work = false) {
  // Raw: CTEs of the enclosing raw statement, reading its `upd` CTE.
  return sql`,
    ev as (insert into ${c.t.events} (run_id, seq, type, data) select upd.id, upd.event_seq, ${type}, ${data} from upd)${notifyEvent(c, work)}`;
}

/** After a committed write: the signals the statement did not send itself (see {@link notifyEvent}). */
export function published(c: StoreContext, run: RunRecord, work = false): RunRecord {
  c.publish?.(work ? [eventSignal(run), { kind: "work", planHash: run.planHash }] : [eventSignal(run)]);
  return run;
}

/**
 * The column that turns `synchronous_commit` off for a relaxed step commit's own transaction: the
 * commit does not wait for the WAL flush. Not when a visit being committed (`first − 1` to
 * `last − 1`) dispatched an effect that is not safe to repeat (`non_idempotent`, or `idempotent`
 * without a key, as `safeToRepeat` judges): its outcome (a relaxed journal write) is then made
 * durable by this commit, so a database crash cannot turn a completed unsafe effect into one under
 * review.
 */
function relaxedStepCommit(c: StoreContext, fence: Fence, first: number, last: number) {
  const visits =
    first === last
      ? sql`e.checkpoint_seq = ${first - 1}`
      : sql`e.checkpoint_seq between ${first - 1} and ${last - 1}`;
  return sql`, set_config('synchronous_commit', case when exists (select 1 from ${journalTables(c).effects} e
      where e.run_id = ${fence.runId} and ${visits} and (e.effect = 'non_idempotent' or (e.effect = 'idempotent' and e.idempotency_key is null)))
    then 'on' else 'off' end, true) as relaxed`;
}

/** Checks a batch of step commits: not empty, consecutive, and the first against a known base. */
function checkBatch(fence: Fence, writes: readonly CheckpointWrite[]): void {
  const problem =
    writes.length === 0
      ? "it is empty"
      : writes[0]!.baseId === PREVIOUS_CHECKPOINT
        ? "its first checkpoint names the one before it in the batch as its base"
        : writes.some((w, i) => i > 0 && w.sequence !== writes[i - 1]!.sequence + 1)
          ? "its sequences are not consecutive"
          : undefined;
  if (problem) {
    throw new DurableError(
      "invalid_argument",
      `A batch of step commits for run ${fence.runId} is invalid: ${problem}.`,
      {
        details: { runId: fence.runId, sequences: writes.map((w) => w.sequence) },
      },
    );
  }
}

/**
 * See `RunStoreV1.commitStep` and `commitSteps`: the checkpoints of consecutive steps in one
 * statement. One checkpoint row per step, each standing for its `run.checkpoint` event; the run row
 * moves once (version + 1, event sequence + n). A write naming `PREVIOUS_CHECKPOINT` is compressed
 * against the write before it and gets its id as `base_id`. The session's head moves to the last.
 */
export async function commitSteps(
  c: StoreContext,
  fence: Fence,
  writes: readonly CheckpointWrite[],
  expectedVersion?: number,
): Promise<RunRecord> {
  checkBatch(fence, writes);
  const version = expectedVersion ?? null;
  const cps: CheckpointValues[] = [];
  for (const write of writes) cps.push(checkpointValues(c, write, cps.at(-1)));
  const n = writes.length;
  const first = writes[0]!;
  const last = writes[n - 1]!;
  const relaxed = c.relaxedSteps ? relaxedStepCommit(c, fence, first.sequence, last.sequence) : sql``;
  // One step: the run row as updated is the checkpoint's source. Several: one source row per
  // checkpoint with its id, its base's id and its event's sequence.
  const ids =
    n === 1
      ? sql`nextval(${c.t.checkpointIds}) as id`
      : sql`array(select nextval(${c.t.checkpointIds}) from generate_series(1, ${n}::int)) as ids`;
  const lastId = n === 1 ? sql`cid.id` : sql`cid.ids[${n}::int]`;
  const rows =
    n === 1
      ? checkpointCtes(c, cps[0]!, sql`upd`, "")
      : sql.join(
          cps.map((cp, i) => {
            const src = sql.raw(`u${i}`);
            return sql`,
    ${src} as (select upd.id, upd.tenant_id, cid.ids[${i + 1}::int] as checkpoint_id, cid.ids[${i}::int] as previous_id,
      upd.event_seq - ${n - 1 - i}::int as event_seq from upd, cid)${checkpointCtes(c, cp, src, String(i), i === n - 1)}`;
          }),
          sql``,
        );
  // Raw: run update, checkpoints, head, notify and journal delete: data-modifying CTEs of one statement.
  const result = await sql<RunRow>`
    with cid as (select ${ids}${relaxed}),
    upd as (
      update ${c.t.runs} r set version = r.version + 1, checkpoint_seq = ${last.sequence}, checkpoint_id = ${lastId},
        next_step = ${last.nextStep}, attempt = 1, crashes = 0, event_seq = r.event_seq + ${n}, updated_at = now()
      from cid
      where ${fenceGuard(fence)} and r.checkpoint_seq = ${first.sequence - 1} and (${version}::bigint is null or r.version = ${version}::bigint)
      returning ${runColumns("r")}
    )${rows}${notifyEvent(c)},
    -- The visits before the last checkpoint are committed: their journal is done with (the next visit starts empty).
    jd as (delete from ${c.t.journal} j using upd where j.run_id = upd.id and j.checkpoint_seq < ${last.sequence})
    select upd.*, (select count(*) from nt) as notified from upd`.execute(c.db);
  const row = result.rows[0];
  if (!row)
    return diagnose(c, fence, n === 1 ? "commit a checkpoint of" : `commit ${n} checkpoints of`, {
      seq: first.sequence,
      ...(expectedVersion === undefined ? {} : { version: expectedVersion }),
    });
  const run = toRun(row);
  c.contexts.set(run.checkpointId, cps[n - 1]!.context);
  return published(c, run);
}

/** See `RunStoreV1.scheduleRetry`. */
export async function scheduleRetry(
  c: StoreContext,
  fence: Fence,
  input: { delayMs: number; error: RunErrorInfo },
): Promise<RunRecord> {
  const delay = Math.max(0, Math.round(input.delayMs));
  // Raw: the fenced update, its event and notify are data-modifying CTEs of one statement.
  const result = await sql<RunRow>`
    with upd as (
      update ${c.t.runs} r set status = 'queued', version = r.version + 1, attempt = r.attempt + 1, lease_holder = null,
        lease_expires_at = null, not_before = now() + ${delay} * interval '1 millisecond', queued_at = now(),
        event_seq = r.event_seq + 1, updated_at = now()
      where ${fenceGuard(fence)}
      returning ${runColumns("r")}
    )${eventAndNotify(
      c,
      "run.retry.scheduled",
      sql`json_build_object('from', 'running', 'to', 'queued', 'attempt', (select attempt from upd), 'delayMs', ${delay}::int, 'error', ${JSON.stringify(input.error)}::json)::text`,
      true,
    )}
    select upd.*, (select count(*) from nt) as notified from upd`.execute(c.db);
  const row = result.rows[0];
  if (!row) return diagnose(c, fence, "schedule a retry of");
  return published(c, toRun(row), true);
}

/** See `RunStoreV1.release`. */
export async function releaseRun(c: StoreContext, fence: Fence): Promise<RunRecord> {
  // Raw: the fenced update, its event and notify are data-modifying CTEs of one statement.
  const result = await sql<RunRow>`
    with upd as (
      update ${c.t.runs} r set status = 'queued', version = r.version + 1, lease_holder = null, lease_expires_at = null,
        queued_at = now(), event_seq = r.event_seq + 1, updated_at = now()
      where ${fenceGuard(fence)}
      returning ${runColumns("r")}
    )${eventAndNotify(c, "run.state.changed", JSON.stringify({ from: "running", to: "queued", reason: "released" }), true)}
    select upd.*, (select count(*) from nt) as notified from upd`.execute(c.db);
  const row = result.rows[0];
  if (!row) return diagnose(c, fence, "release");
  return published(c, toRun(row), true);
}

/** See `RunStoreV1.park`. */
export async function parkRun(
  c: StoreContext,
  fence: Fence,
  input: { status: "waiting" | "needs_review"; reason: string; data?: JsonValue },
): Promise<RunRecord> {
  assertTransition("running", input.status, fence.runId);
  const data = JSON.stringify({
    from: "running",
    to: input.status,
    reason: input.reason,
    ...(input.data === undefined ? {} : { data: input.data }),
  });
  // Raw: the fenced update, its event and notify are data-modifying CTEs of one statement.
  const result = await sql<RunRow>`
    with upd as (
      update ${c.t.runs} r set status = ${input.status}, version = r.version + 1, lease_holder = null, lease_expires_at = null,
        event_seq = r.event_seq + 1, updated_at = now()
      where ${fenceGuard(fence)}
      returning ${runColumns("r")}
    )${eventAndNotify(c, "run.state.changed", data)}
    select upd.*, (select count(*) from nt) as notified from upd`.execute(c.db);
  const row = result.rows[0];
  if (!row) return diagnose(c, fence, `park (${input.status})`);
  return published(c, toRun(row));
}

/**
 * A status change that is not a worker's (operators, sweeps): guarded by the table's source
 * statuses for `to`, version-bumped, with its event and, given one, its audit record; throws
 * `invalid_transition` or `run_not_found` when no row changed (and then writes no record).
 */
async function operatorTransition(
  c: StoreContext,
  runId: string,
  to: RunStatus,
  allowed: readonly RunStatus[],
  event: Record<string, unknown>,
  extra: {
    error?: RunErrorInfo;
    notifyWork?: boolean;
    notifyCancel?: boolean;
    audit?: AuditInput | undefined;
  },
): Promise<RunRecord> {
  if (!isUuid(runId)) throw notFound(runId);
  const terminal = isTerminal(to);
  const error = extra.error ? JSON.stringify(extra.error) : null;
  const sources = sql.join(allowed.map((s) => sql.lit(s)));
  // Raw: the row lock, update, event and notify are data-modifying CTEs of one statement.
  const result = await sql<RunRow & { prior: string }>`
    with old as (select id, status from ${c.t.runs} where id = ${runId} and status in (${sources}) for update),
    upd as (
      update ${c.t.runs} r set status = ${to}, version = r.version + 1, lease_holder = null, lease_expires_at = null,
        event_seq = r.event_seq + 1, updated_at = now(),
        ${terminal ? sql`ended_at = now(), error = coalesce(${error}, r.error)` : sql`queued_at = now(), not_before = now()`}
      from old where r.id = old.id
      returning ${runColumns("r")}, old.status as prior
    ),
    ev as (
      insert into ${c.t.events} (run_id, seq, type, data)
      select upd.id, upd.event_seq, 'run.state.changed', (json_build_object('from', upd.prior, 'to', ${to}::text)::jsonb || ${JSON.stringify(event)}::jsonb)::text from upd
    ),
    nt as (select pg_notify(${c.channels.events}, upd.id || ':' || upd.event_seq || ':' || upd.status) from upd
      ${extra.notifyWork ? sql`union all select pg_notify(${c.channels.work}, upd.plan_hash) from upd` : sql``}
      ${extra.notifyCancel ? sql`union all select pg_notify(${c.channels.cancel}, upd.id::text) from upd` : sql``})${
        extra.audit
          ? sql`,
    au as (${auditCte(c, extra.audit, sql`upd`)})`
          : sql``
      }
    select upd.*, (select count(*) from nt) as notified from upd`.execute(c.db);
  const row = result.rows[0];
  if (row) return toRun(row);
  const current = await tables(c)
    .selectFrom("runs")
    .select(RUN_COLUMN_NAMES)
    .where("id", "=", runId)
    .executeTakeFirst();
  if (!current) throw notFound(runId);
  const run = toRun(current);
  assertTransition(run.status, to, runId);
  throw new DurableError(
    "invalid_transition",
    `Run ${runId} cannot go from "${run.status}" to "${to}" here.`,
    {
      details: { runId, from: run.status, to },
    },
  );
}

/** See `RunStoreV1.unpark`. */
export function unparkRun(
  c: StoreContext,
  runId: string,
  input: { actor: string; reason: string; audit?: AuditInput },
): Promise<RunRecord> {
  return operatorTransition(
    c,
    runId,
    "queued",
    ["waiting", "needs_review"],
    { actor: input.actor, reason: input.reason },
    { notifyWork: true, audit: input.audit },
  );
}

/** See `RunStoreV1.cancel`. */
export function cancelRun(
  c: StoreContext,
  runId: string,
  input: { reason?: string; actor?: string; audit?: AuditInput } = {},
): Promise<RunRecord> {
  const reason = input.reason ?? "cancelled";
  return operatorTransition(
    c,
    runId,
    "cancelled",
    sourcesOf("cancelled"),
    { reason, ...(input.actor ? { actor: input.actor } : {}) },
    { error: { code: "cancelled", message: reason }, notifyCancel: true, audit: input.audit },
  );
}

/** See `RunStoreV1.appendEvent`. */
export async function appendEvent(c: StoreContext, fence: Fence, event: EventInput): Promise<number> {
  if (typeof event.type !== "string" || event.type === "" || event.type.startsWith("run.")) {
    throw new DurableError(
      "invalid_argument",
      `Event type ${JSON.stringify(event.type)} is not allowed: use a non-empty type outside "run.*" (reserved for the runtime).`,
      {
        details: { type: event.type },
      },
    );
  }
  // Raw: the fenced update, its event and notify are data-modifying CTEs of one statement.
  const result = await sql<{ event_seq: unknown; status: RunStatus }>`
    with upd as (
      update ${c.t.runs} r set event_seq = r.event_seq + 1 where ${fenceGuard(fence)} returning r.id, r.event_seq, r.status
    )${eventAndNotify(c, event.type, JSON.stringify(event.data ?? null))}
    select upd.event_seq, upd.status, (select count(*) from nt) as notified from upd`.execute(c.db);
  const row = result.rows[0];
  if (!row) return diagnose(c, fence, "append an event to");
  const seq = Number(row.event_seq);
  c.publish?.([eventSignal({ id: fence.runId, eventSeq: seq, status: row.status })]);
  return seq;
}

/** See `RunStoreV1.sweep`. */
export async function sweep(c: StoreContext): Promise<SweepResult> {
  const { runs, events } = c.t;
  const expiredDeadline = JSON.stringify({
    code: "deadline_exceeded",
    message: "The run passed its deadline.",
  });
  // Raw: `for update skip locked` selections feeding data-modifying CTEs of one statement.
  const result = await sql<{ requeued: number; timed_out: number }>`
    with exp as (
      select id from ${runs} where status = 'running' and lease_expires_at <= now()
      order by lease_expires_at limit 500 for update skip locked
    ),
    rq as (
      update ${runs} r set status = 'queued', version = r.version + 1, lease_holder = null, lease_expires_at = null,
        queued_at = now(), event_seq = r.event_seq + 1, updated_at = now()
      from exp where r.id = exp.id
      returning r.id, r.event_seq, r.fencing_token, r.plan_hash
    ),
    ev1 as (
      insert into ${events} (run_id, seq, type, data)
      select id, event_seq, 'run.lease.expired', json_build_object('from', 'running', 'to', 'queued', 'fencingToken', fencing_token)::text from rq
    ),
    late as (
      select id, status from ${runs} where deadline <= now() and status in (${from("timed_out")}) and status <> 'running'
      order by deadline limit 500 for update skip locked
    ),
    tq as (
      update ${runs} r set status = 'timed_out', version = r.version + 1, event_seq = r.event_seq + 1, ended_at = now(),
        updated_at = now(), error = ${expiredDeadline}, lease_holder = null, lease_expires_at = null
      from late where r.id = late.id
      returning r.id, r.event_seq, late.status as prior
    ),
    ev2 as (
      insert into ${events} (run_id, seq, type, data)
      select id, event_seq, 'run.state.changed', json_build_object('from', prior, 'to', 'timed_out', 'reason', 'deadline')::text from tq
    ),
    nt as (
      select pg_notify(${c.channels.work}, plan_hash) from rq
      union all select pg_notify(${c.channels.events}, id || ':' || event_seq || ':queued') from rq
      union all select pg_notify(${c.channels.events}, id || ':' || event_seq || ':timed_out') from tq
    )
    select (select count(*)::int from rq) as requeued, (select count(*)::int from tq) as timed_out, (select count(*) from nt) as notified`.execute(
    c.db,
  );
  const row = result.rows[0]!;
  return { requeued: Number(row.requeued), timedOut: Number(row.timed_out) };
}
