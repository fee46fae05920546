import type { JsonValue } from "@openrath/core";
import type { RunEvent } from "@openrath/runtime-durable/store";
import { sql } from "kysely";
import { checkpointEventData, seqGroup } from "./checkpoints.js";
import type { StoreContext } from "./context.js";

/**
 * The events of a run after `after`, in order, at most `limit`: the rows of `run_events`, and the
 * `run.checkpoint` events that step checkpoints stand for (a checkpoint row carries its event's
 * sequence, so a step writes one row, not two). One statement. The checkpoints read are bounded by
 * the run's counters: at most `event_seq − after` of them carry a sequence above `after`, and they
 * are the run's latest, so only that many (and a final checkpoint, which carries none) are scanned
 * (the groups of 32 sequences at or above the lowest one: the `(run_id, seq >> 5)` index).
 */
export async function readEvents(
  c: StoreContext,
  runId: string,
  after: number,
  limit: number,
): Promise<RunEvent[]> {
  // Raw: a union over two tables bounded by a derived row and the `seq >> 5` index expression.
  const result = await sql<{ run_id: string; seq: unknown; type: string; data: string; at: Date }>`
    select run_id, seq, type, data, at from (
      select run_id, seq, type, data, at from ${c.t.events} where run_id = ${runId}::uuid and seq > ${after}
      union all
      select k.run_id, k.event_seq, 'run.checkpoint', ${checkpointEventData(sql`k`)}, k.created_at
      from ${c.t.checkpoints} k,
        (select r.checkpoint_seq - (r.event_seq - ${after}) - 1 as low from ${c.t.runs} r where r.id = ${runId}::uuid) b
      where k.run_id = ${runId}::uuid and k.event_seq > ${after} and k.seq >= b.low and ${seqGroup(sql`k`)} >= (b.low >> 5)
    ) e order by seq limit ${limit}`.execute(c.db);
  return result.rows.map((row) => ({
    runId: String(row.run_id),
    seq: Number(row.seq),
    type: row.type,
    data: JSON.parse(row.data) as JsonValue,
    at: new Date(row.at).getTime(),
  }));
}
