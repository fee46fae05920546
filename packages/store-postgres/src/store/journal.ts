import {
  DurableError,
  type Fence,
  type JournalEntryInput,
  type StepJournalState,
} from "@openrath/runtime-durable/store";
import { sql } from "kysely";
import { type StoreContext, tables } from "./context.js";
import { diagnose, guardCte } from "./fencing.js";
import { journalTables, toEntry, toJournaledInterrupt } from "./journal-rows.js";

/**
 * How a journal write commits: `relaxed` without waiting for the WAL flush (the statement sets
 * `synchronous_commit` off for its own transaction), `strict` with it. See {@link JournalDurability}.
 */
export type Commit = "relaxed" | "strict";

/**
 * What the store's options say about the journal's commits: `relaxed` (the default) commits the
 * writes whose loss in a database crash is harmless — journal entries and outcomes (the calls are
 * made again; a lost outcome leaves its effect `dispatched`, judged ambiguous by the next lease) and
 * the dispatch of effects that are safe to repeat — without waiting for the WAL flush. PostgreSQL
 * flushes the WAL in order, so any later strict commit (a checkpoint, the dispatch of an effect not
 * safe to repeat, a park) makes every earlier relaxed one durable too. `strict` waits on every write.
 */
export type JournalDurability = Commit;

/** See `JournalStoreV1.openStep`. */
export async function openStep(c: StoreContext, fence: Fence, commit: Commit): Promise<StepJournalState> {
  const t = journalTables(c);
  // Raw: the fence guard's `for share` CTE, a delete CTE and `array(…)` subqueries in one statement.
  const result = await sql<{ seq: unknown; entries: string[]; interrupts: string[] }>`
    with ${guardCte(c, fence, commit)},
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

/**
 * A CTE inserting `entries` into the journal for the run in `from` (a CTE with `run_id`);
 * `returning 1` per entry the journal now holds: inserted, or found there with the same call. A
 * position holding another call returns nothing (the caller's count falls short: see
 * {@link checkExisting}). Two writes may carry the same entry at once (a reply's own write and the
 * tool outcome that depends on it): the second waits for the first to commit and counts its row.
 */
export function entriesCte(
  c: StoreContext,
  name: string,
  from: string,
  fence: Fence,
  entries: readonly JournalEntryInput[],
) {
  const t = journalTables(c);
  // A VALUES list plans far faster than unnesting parallel arrays (this is the journal's hot path).
  const rows = sql.join(
    entries.map(
      (e) =>
        sql`(${e.checkpointSeq}::int, ${e.position}::text, ${e.kind}::text, ${e.fingerprint}::text, ${e.label}::text, ${JSON.stringify(e.result)}::text, ${e.trace?.traceId ?? null}::text, ${e.trace?.spanId ?? null}::text)`,
    ),
  );
  // Raw: an upsert from a VALUES list, as a CTE reading the statement's run CTE.
  return sql`${sql.raw(name)} as (
      insert into ${t.journal} as j (run_id, checkpoint_seq, position, kind, fingerprint, label, result, fencing_token, trace_id, span_id)
      select ${sql.raw(from)}.run_id, e.seq, e.position, e.kind, e.fingerprint, e.label, e.result, ${fence.token}::bigint, e.trace_id, e.span_id
      from ${sql.raw(from)}, (values ${rows}) as e(seq, position, kind, fingerprint, label, result, trace_id, span_id)
      on conflict (run_id, checkpoint_seq, position) do update set fencing_token = j.fencing_token
        where j.kind = excluded.kind and j.fingerprint = excluded.fingerprint
      returning 1
    )`;
}

/**
 * After an insert of `entries` wrote fewer rows than it had: the positions already held must hold
 * the same calls (a repeated write), or it is `journal_conflict`.
 */
export async function checkExisting(
  c: StoreContext,
  fence: Fence,
  entries: readonly JournalEntryInput[],
): Promise<void> {
  // `= any(array)`, not `in (…)`: one statement text (one prepared statement) for any count.
  const rows = await tables(c)
    .selectFrom("journal")
    .select(["checkpoint_seq", "position", "fingerprint", "kind"])
    .where("run_id", "=", fence.runId)
    .where("position", "=", sql<string>`any(${entries.map((e) => e.position)}::text[])`)
    .execute();
  for (const entry of entries) {
    const prior = rows.find(
      (r) => Number(r.checkpoint_seq) === entry.checkpointSeq && r.position === entry.position,
    );
    if (prior && (prior.fingerprint !== entry.fingerprint || prior.kind !== entry.kind)) {
      throw new DurableError(
        "journal_conflict",
        `Journal position ${entry.position} of run ${fence.runId} (visit ${entry.checkpointSeq}) already holds another call (${entry.label}).`,
        { details: { runId: fence.runId, position: entry.position, checkpointSeq: entry.checkpointSeq } },
      );
    }
  }
}

/** See `JournalStoreV1.record`. */
export async function recordEntries(
  c: StoreContext,
  fence: Fence,
  entries: readonly JournalEntryInput[],
  commit: Commit,
): Promise<void> {
  if (entries.length === 0) return;
  // Raw: the fence guard's `for share` CTE and the journal upsert CTE in one statement.
  const result = await sql<{ guarded: unknown; inserted: unknown }>`
    with ${guardCte(c, fence, commit)},
    run as (select guard.id as run_id from guard),
    ${entriesCte(c, "ins", "run", fence, entries)}
    select (select count(*) from guard) as guarded, (select count(*) from ins) as inserted`.execute(c.db);
  const row = result.rows[0]!;
  if (Number(row.guarded) === 0) return diagnose(c, fence, "write the journal of");
  if (Number(row.inserted) < entries.length) await checkExisting(c, fence, entries);
}
