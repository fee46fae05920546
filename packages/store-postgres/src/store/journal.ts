import {
  DurableError,
  type Fence,
  type JournalEntryInput,
  type StepJournalState,
} from "@openrath/runtime-durable";
import { sql } from "kysely";
import type { StoreContext } from "./context.js";
import { journalTables, toEntry, toJournaledInterrupt } from "./journal-rows.js";
import { diagnose, fenceGuard } from "./transitions.js";

/** The fence guard as a CTE that share-locks the run row: a claim or requeue waits until the write commits. */
export function guardCte(c: StoreContext, fence: Fence) {
  return sql`guard as (select r.id, r.tenant_id, r.checkpoint_seq from ${c.t.runs} r where ${fenceGuard(fence)} for share of r)`;
}

/** See `JournalStoreV1.openStep`. */
export async function openStep(c: StoreContext, fence: Fence): Promise<StepJournalState> {
  const t = journalTables(c);
  const result = await sql<{ seq: unknown; entries: string[]; interrupts: string[] }>`
    with ${guardCte(c, fence)},
    del as (delete from ${t.journal} j using guard where j.run_id = guard.id and j.checkpoint_seq < guard.checkpoint_seq)
    select guard.checkpoint_seq as seq,
      array(select row_to_json(j)::text from ${t.journal} j where j.run_id = guard.id and j.checkpoint_seq = guard.checkpoint_seq) as entries,
      array(select row_to_json(i)::text from ${t.interrupts} i where i.run_id = guard.id and i.checkpoint_seq = guard.checkpoint_seq order by i.seq) as interrupts
    from guard`.execute(c.db);
  const row = result.rows[0];
  if (!row) return diagnose(c, fence, "open a step of");
  return {
    checkpointSeq: Number(row.seq),
    entries: row.entries.map((text) => toEntry(JSON.parse(text))),
    interrupts: row.interrupts.map((text) => toJournaledInterrupt(JSON.parse(text))),
  };
}

/** See `JournalStoreV1.record`. */
export async function recordEntry(c: StoreContext, fence: Fence, entry: JournalEntryInput): Promise<void> {
  const t = journalTables(c);
  const result = await sql<{ guarded: unknown; inserted: unknown }>`
    with ${guardCte(c, fence)},
    ins as (
      insert into ${t.journal} (run_id, checkpoint_seq, position, kind, fingerprint, label, result, fencing_token)
      select guard.id, ${entry.checkpointSeq}, ${entry.position}, ${entry.kind}, ${entry.fingerprint}, ${entry.label},
        ${JSON.stringify(entry.result)}, ${fence.token}
      from guard
      on conflict do nothing
      returning 1
    )
    select (select count(*) from guard) as guarded, (select count(*) from ins) as inserted`.execute(c.db);
  const row = result.rows[0]!;
  if (Number(row.guarded) === 0) return diagnose(c, fence, "write the journal of");
  if (Number(row.inserted) === 1) return;
  const existing = await sql<{ fingerprint: string; kind: string }>`
    select fingerprint, kind from ${t.journal}
    where run_id = ${fence.runId} and checkpoint_seq = ${entry.checkpointSeq} and position = ${entry.position}`.execute(
    c.db,
  );
  const prior = existing.rows[0];
  if (prior && prior.fingerprint === entry.fingerprint && prior.kind === entry.kind) return;
  throw new DurableError(
    "journal_conflict",
    `Journal position ${entry.position} of run ${fence.runId} (visit ${entry.checkpointSeq}) already holds another call (${entry.label}).`,
    { details: { runId: fence.runId, position: entry.position, checkpointSeq: entry.checkpointSeq } },
  );
}
