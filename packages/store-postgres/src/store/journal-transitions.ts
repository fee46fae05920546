import type { JsonValue } from "@openrath/core";
import {
  assertTransition,
  DurableError,
  type Fence,
  isTerminal,
  type RunErrorInfo,
  type RunRecord,
  type RunStatus,
} from "@openrath/runtime-durable/store";
import { type Kysely, sql } from "kysely";
import type { Database } from "../schema.js";
import { type RunRow, type StoreContext, tables, toRun } from "./context.js";
import { fenceGuard } from "./fencing.js";

type Tx = Kysely<Database>;

/** A change of a run the journal makes inside its transaction, with the event that reports it. */
export interface RunChange {
  readonly runId: string;
  /** Move the run from `from` to this status (checked against the transition table); omit for an event only. */
  readonly to?: RunStatus;
  /** The status the run must be in for a status change (one of them). */
  readonly from?: readonly RunStatus[];
  /** A worker's change: guarded by its fence instead of `from`. */
  readonly fence?: Fence;
  readonly type: string;
  readonly data: Record<string, JsonValue>;
  readonly error?: RunErrorInfo;
}

/**
 * Applies `change` in `tx`: the guarded status update (version + 1, lease released for a parked,
 * queued or terminal run) or just the event counter, the event with the new sequence, and the
 * notifications (`work` when the run is queued again). Returns the run, or `undefined` when the
 * guard matched no row.
 */
export async function changeRun(tx: Tx, c: StoreContext, change: RunChange): Promise<RunRecord | undefined> {
  const to = change.to;
  if (to && change.from) for (const from of change.from) assertTransition(from, to, change.runId);
  if (to && change.fence) assertTransition("running", to, change.runId);
  const terminal = to !== undefined && isTerminal(to);
  const set = to
    ? sql`status = ${to}, version = r.version + 1, lease_holder = null, lease_expires_at = null, event_seq = r.event_seq + 1, updated_at = now()
        ${to === "queued" ? sql`, queued_at = now(), not_before = now()` : sql``}
        ${terminal ? sql`, ended_at = now(), error = coalesce(${change.error ? JSON.stringify(change.error) : null}, r.error)` : sql``}`
    : sql`event_seq = r.event_seq + 1`;
  const guard = change.fence
    ? fenceGuard(change.fence)
    : change.from
      ? sql`r.id = ${change.runId} and r.status in (${sql.join(change.from.map((s) => sql.lit(s)))})`
      : sql`r.id = ${change.runId}`;
  const data = JSON.stringify(to ? { ...change.data, to } : change.data);
  // Raw: the row lock, update, event and notify are data-modifying CTEs of one statement.
  const result = await sql<RunRow>`
    with prior as (select r.id, r.status from ${c.t.runs} r where ${guard} for update of r),
    upd as (update ${c.t.runs} r set ${set} from prior where r.id = prior.id returning r.*, prior.status as prior_status),
    ev as (
      insert into ${c.t.events} (run_id, seq, type, data)
      select upd.id, upd.event_seq, ${change.type},
        ${to ? sql`(jsonb_build_object('from', upd.prior_status) || ${data}::jsonb)::text` : sql`${data}`}
      from upd
    ),
    nt as (
      select pg_notify(${c.channels.events}, upd.id || ':' || upd.event_seq || ':' || upd.status) from upd
      ${to === "queued" ? sql`union all select pg_notify(${c.channels.work}, upd.plan_hash) from upd` : sql``}
    )
    select upd.*, (select count(*) from nt) as notified from upd`.execute(tx);
  const row = result.rows[0];
  return row ? toRun(row) : undefined;
}

/** The `invalid_transition` error for a run that is not in one of `from` (or not found). */
export async function notIn(
  tx: Tx,
  c: StoreContext,
  runId: string,
  from: readonly RunStatus[],
  to: RunStatus,
): Promise<DurableError> {
  const current = await tables(c, tx)
    .selectFrom("runs")
    .select("status")
    .where("id", "=", runId)
    .executeTakeFirst();
  const status = current?.status as RunStatus | undefined;
  if (!status) return new DurableError("run_not_found", `No run ${runId}.`, { details: { runId } });
  return new DurableError(
    "invalid_transition",
    `Run ${runId} is ${status}, not ${from.join(" or ")}, so it cannot go to "${to}".`,
    { details: { runId, from: status, to } },
  );
}
