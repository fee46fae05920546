import {
  assertTransition,
  type DurableError,
  type Fence,
  type FinishInput,
  type RunRecord,
} from "@openrath/runtime-durable/store";
import { sql } from "kysely";
import { type CheckpointValues, checkpointValues } from "./chunk-rows.js";
import { eventSignal, grouped, runColumns, type StoreContext, toRun } from "./context.js";
import { diagnose, fenceGuard } from "./fencing.js";
import { checkpointCtes } from "./transitions.js";

/** One run's end: its fence and what `RunStoreV1.finish` was given. */
export interface FinishItem {
  readonly fence: Fence;
  readonly input: FinishInput;
}

/**
 * The most runs' ends one statement carries. Each batch size and shape is its own prepared
 * statement, so the bound also bounds the statements a connection keeps.
 */
export const FINISH_BATCH = 8;

/** The CTEs ending item `i`'s run (named with the suffix `_i`), and its checkpoint's values. */
function finishCtes(c: StoreContext, { fence, input }: FinishItem, i: number) {
  const n = (base: string) => sql.raw(`${base}_${i}`);
  const error = input.error ? JSON.stringify(input.error) : null;
  const data = JSON.stringify({
    from: "running",
    to: input.status,
    ...(input.error ? { error: input.error } : {}),
  });
  const write = input.checkpoint;
  const cp = write ? checkpointValues(c, write) : undefined;
  const notify = c.publish
    ? sql`select 1 from ${n("upd")} where false`
    : sql`select pg_notify(${c.channels.events}, u.id || ':' || u.event_seq || ':' || u.status) from ${n("upd")} u`;
  // Raw: data-modifying CTEs of the grouped statement (see `grouped`).
  const ctes = sql`${n("cid")} as (select ${write ? sql`nextval(${c.t.checkpointIds})` : sql`null::bigint`} as id),
    ${n("upd")} as (
      update ${c.t.runs} r set status = ${input.status}, version = r.version + 1, lease_holder = null, lease_expires_at = null,
        ended_at = now(), updated_at = now(), error = ${error}, event_seq = r.event_seq + 1,
        next_step = ${write ? write.nextStep : sql`r.next_step`},
        checkpoint_seq = ${write ? write.sequence : sql`r.checkpoint_seq`},
        checkpoint_id = coalesce(${n("cid")}.id, r.checkpoint_id)
      from ${n("cid")}
      where ${fenceGuard(fence)} ${write ? sql`and r.checkpoint_seq = ${write.sequence - 1}` : sql``}
      returning ${runColumns("r")}
    )${cp ? checkpointCtes(c, cp, sql`${n("upd")}`, `_${i}`, true, false) : sql``},
    ${n("ev")} as (insert into ${c.t.events} (run_id, seq, type, data) select u.id, u.event_seq, 'run.state.changed', ${data} from ${n("upd")} u),
    ${n("nt")} as (${notify})`;
  const select = sql`select ${i}::int as item, u.*, (select count(*) from ${n("nt")}) as notified from ${n("upd")} u`;
  return { ctes, select, cp };
}

/**
 * Ends several runs (each `RunStoreV1.finish`) in one statement, so runs that end together share a
 * round trip and a commit. Each item's write is guarded by its own fence: a refused one changes
 * nothing and is diagnosed alone (the others commit). Transitions are checked before anything is sent.
 * Returns, per item, its final record or the coded error `finish` would throw.
 */
export async function finishRuns(
  c: StoreContext,
  items: readonly FinishItem[],
): Promise<(RunRecord | DurableError)[]> {
  for (const { fence, input } of items) assertTransition("running", input.status, fence.runId);
  const parts = items.map((item, i) => finishCtes(c, item, i));
  // Raw: each run's fenced update, checkpoint, event and notify: data-modifying CTEs of one statement.
  const result = await grouped(parts).execute(c.db);
  const ended = new Map<number, RunRecord>();
  for (const row of result.rows) {
    const run = toRun(row);
    const cp: CheckpointValues | undefined = parts[row.item]!.cp;
    if (cp) c.contexts.set(run.checkpointId, cp.context);
    ended.set(Number(row.item), run);
  }
  // The group's signals in one publish: on a server, one notifying statement for all of them.
  c.publish?.([...ended.values()].map(eventSignal));
  return Promise.all(
    items.map(async ({ fence, input }, i) => {
      const run = ended.get(i);
      if (run) return run;
      const write = input.checkpoint;
      return diagnose(
        c,
        fence,
        `finish (${input.status})`,
        write ? { seq: write.sequence } : undefined,
      ).catch((error: DurableError) => error);
    }),
  );
}
