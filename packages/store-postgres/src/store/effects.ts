import { randomUUID } from "node:crypto";
import type { ToolOutcome } from "@openrath/core";
import {
  DurableError,
  type EffectInput,
  type EffectRecord,
  type Fence,
  type JournalEntryInput,
  type RunRecord,
  safeToRepeat,
} from "@openrath/runtime-durable/store";
import { sql } from "kysely";
import { type StoreContext, tables } from "./context.js";
import { getEffect } from "./effect-reviews.js";
import { diagnose, guardCte } from "./fencing.js";
import { type Commit, checkExisting, entriesCte } from "./journal.js";
import { journalTables, toEffect } from "./journal-rows.js";
import { changeRun } from "./journal-transitions.js";

type Row = Record<string, unknown>;

/** Throws the fence's diagnosis when it is stale; returns when it is current. */
async function fenceCurrent(c: StoreContext, fence: Fence): Promise<void> {
  // Raw: reads the fence guard's `for share` CTE, as the writes it diagnoses do.
  const r = await sql<{ ok: unknown }>`with ${guardCte(c, fence)} select count(*) as ok from guard`.execute(
    c.db,
  );
  if (Number(r.rows[0]?.ok) === 0) await diagnose(c, fence, "write the effect ledger of");
}

function conflict(message: string, details: Record<string, unknown>): DurableError {
  return new DurableError("effect_conflict", message, { details });
}

/** See `JournalStoreV1.beginEffect`. */
export async function beginEffect(
  c: StoreContext,
  fence: Fence,
  input: EffectInput,
  entries: readonly JournalEntryInput[],
  commit: Commit,
): Promise<{ effect: EffectRecord; created: boolean }> {
  const { effects } = journalTables(c);
  const key = input.idempotencyKey;
  // A dispatch that is not safe to repeat must be durable before the call goes out.
  const dispatch = safeToRepeat(input.effect, key !== null) ? commit : "strict";
  const argumentsText = JSON.stringify(input.arguments);
  for (let round = 0; round < 2; round++) {
    const id = randomUUID();
    // The common case, a new effect, is one plain insert; finding an existing one is a second query.
    // Raw: the fence guard's `for share` CTE, the insert and the journal upsert as CTEs of one statement.
    const result = await sql<{ guarded: unknown; effect: string | null; journaled: unknown }>`
      with ${guardCte(c, fence, dispatch)},
      ins as (
        insert into ${effects} (id, run_id, tenant_id, checkpoint_seq, step_id, position, tool, call_id, effect, idempotency_key,
          arguments_digest, arguments, status, fencing_token, worker_id, dispatches)
        select ${id}::uuid, guard.id, guard.tenant_id, ${input.checkpointSeq}::int, ${input.stepId}::text, ${input.position}::text,
          ${input.tool}::text, ${input.callId}::text, ${input.effect}::text, ${key}::text, ${input.argumentsDigest}::text,
          ${argumentsText}::text, 'dispatched', ${fence.token}::bigint, ${fence.workerId}::text, 1
        from guard
        on conflict do nothing
        returning tenant_id, created_at
      )${
        entries.length > 0
          ? sql`, run as (select guard.id as run_id from guard), ${entriesCte(c, "j", "run", fence, entries)}`
          : sql``
      }
      select (select count(*) from guard) as guarded, (select json_build_array(tenant_id, created_at)::text from ins) as effect${
        entries.length > 0 ? sql`, (select count(*) from j) as journaled` : sql``
      }`.execute(c.db);
    const row = result.rows[0]!;
    if (Number(row.guarded) === 0) return diagnose(c, fence, "write the effect ledger of");
    if (entries.length > 0 && Number(row.journaled) < entries.length) await checkExisting(c, fence, entries);
    if (row.effect !== null) {
      // The row is what this statement wrote: only the columns the database filled in come back.
      const [tenantId, createdAt] = JSON.parse(row.effect) as [string, string];
      const effect = toEffect({
        id,
        run_id: fence.runId,
        tenant_id: tenantId,
        checkpoint_seq: input.checkpointSeq,
        step_id: input.stepId,
        position: input.position,
        tool: input.tool,
        call_id: input.callId,
        effect: input.effect,
        idempotency_key: key,
        arguments_digest: input.argumentsDigest,
        arguments: argumentsText,
        status: "dispatched",
        fencing_token: fence.token,
        worker_id: fence.workerId,
        dispatches: 1,
        outcome: null,
        resolution: null,
        created_at: createdAt,
        updated_at: createdAt,
      });
      return { effect, created: true };
    }
    const found = await tables(c)
      .selectFrom("effects")
      .selectAll()
      .where("run_id", "=", fence.runId)
      .$if(key === null, (q) =>
        q
          .where("idempotency_key", "is", null)
          .where("checkpoint_seq", "=", input.checkpointSeq)
          .where("position", "=", input.position),
      )
      .$if(key !== null, (q) => q.where("idempotency_key", "=", key))
      .executeTakeFirst();
    // Nothing yet: a concurrent insert of the same key, not visible when the insert ran; look again.
    if (!found) continue;
    const effect = toEffect(found);
    if (key !== null && (effect.tool !== input.tool || effect.argumentsDigest !== input.argumentsDigest)) {
      throw conflict(
        `Idempotency key ${JSON.stringify(key)} of run ${fence.runId} was used by ${effect.tool === input.tool ? "a call" : `tool "${effect.tool}"`} with other arguments; a key names one call.`,
        {
          runId: fence.runId,
          idempotencyKey: key,
          tool: input.tool,
          existingTool: effect.tool,
          effectId: effect.id,
        },
      );
    }
    return { effect, created: false };
  }
  throw conflict(`The effect at ${input.position} of run ${fence.runId} is being written concurrently.`, {
    runId: fence.runId,
    position: input.position,
  });
}

/** See `JournalStoreV1.dispatchEffect`. */
export async function dispatchEffect(c: StoreContext, fence: Fence, effectId: string): Promise<EffectRecord> {
  const { effects } = journalTables(c);
  // Raw: an update joined to the fence guard's `for share` CTE.
  const result = await sql<Row>`
    with ${guardCte(c, fence)}
    update ${effects} e set status = 'dispatched', fencing_token = ${fence.token}, worker_id = ${fence.workerId},
      dispatches = e.dispatches + 1, updated_at = now()
    from guard
    where e.id = ${effectId} and e.run_id = guard.id and (
      e.status in ('prepared', 'failed')
      or (e.status = 'dispatched' and e.fencing_token < ${fence.token}
        and (e.effect = 'read_only' or (e.effect = 'idempotent' and e.idempotency_key is not null)))
    )
    returning e.*`.execute(c.db);
  const row = result.rows[0];
  if (row) return toEffect(row);
  await fenceCurrent(c, fence);
  const current = await getEffect(c, effectId);
  throw conflict(
    current
      ? `Effect ${effectId} (${current.tool}) is ${current.status}${current.status === "dispatched" ? ` under token ${current.fencingToken}` : ""}; it cannot be dispatched again here.`
      : `No effect ${effectId} in run ${fence.runId}.`,
    { runId: fence.runId, effectId, status: current?.status ?? null },
  );
}

/** See `JournalStoreV1.completeEffect`. */
export async function completeEffect(
  c: StoreContext,
  fence: Fence,
  effectId: string,
  outcome: ToolOutcome,
  entries: readonly JournalEntryInput[],
  commit: Commit,
): Promise<EffectRecord> {
  const t = journalTables(c);
  const stored = JSON.stringify({ content: outcome.content, isError: outcome.isError });
  // Raw: the fence guard's `for share` CTE, the update and the journal upsert as CTEs of one statement.
  const result = await sql<{ effect: string; journaled: unknown }>`
    with ${guardCte(c, fence, commit)},
    upd as (
      update ${t.effects} e set status = ${outcome.isError ? "failed" : "succeeded"}, outcome = ${stored}, updated_at = now()
      from guard
      where e.id = ${effectId} and e.run_id = guard.id and e.status = 'dispatched' and e.fencing_token = ${fence.token}
      returning e.*
    ),
    ${entriesCte(c, "j", "upd", fence, entries)}
    select row_to_json(upd)::text as effect, (select count(*) from j) as journaled from upd`.execute(c.db);
  const row = result.rows[0];
  if (row) {
    if (Number(row.journaled) < entries.length) await checkExisting(c, fence, entries);
    return toEffect(JSON.parse(String(row.effect)));
  }
  await fenceCurrent(c, fence);
  throw conflict(`Effect ${effectId} of run ${fence.runId} is not in flight under token ${fence.token}.`, {
    runId: fence.runId,
    effectId,
  });
}

/** See `JournalStoreV1.reviewEffect`. */
export async function reviewEffect(c: StoreContext, fence: Fence, effectId: string): Promise<RunRecord> {
  const outcome = await c.db
    .transaction()
    .execute(async (tx) => {
      const effect = await tables(c, tx)
        .updateTable("effects as e")
        .set({ status: sql.lit("needs_review"), updated_at: sql`now()` })
        .where("e.id", "=", effectId)
        .where("e.run_id", "=", fence.runId)
        .where((eb) =>
          eb.or([
            eb("e.status", "=", sql.lit("needs_review")),
            eb.and([eb("e.status", "=", sql.lit("dispatched")), eb("e.fencing_token", "<", fence.token)]),
          ]),
        )
        .where((eb) =>
          eb.exists(
            eb
              .selectFrom("runs as r")
              .select(sql.lit(1).as("one"))
              .whereRef("r.id", "=", "e.run_id")
              .where("r.status", "=", sql.lit("running"))
              .where("r.fencing_token", "=", fence.token),
          ),
        )
        .returningAll()
        .executeTakeFirst();
      if (!effect) return { stale: false as const, effect: undefined, run: undefined };
      const run = await changeRun(tx, c, {
        runId: fence.runId,
        fence,
        to: "needs_review",
        type: "run.effect.review",
        data: {
          effectId,
          tool: String(effect.tool),
          effect: String(effect.effect),
          reason: "ambiguous_effect",
        },
      });
      if (!run) throw new RollBack();
      return { stale: false as const, effect, run };
    })
    .catch((error) => {
      if (error instanceof RollBack) return { stale: true as const, effect: undefined, run: undefined };
      throw error;
    });
  if (outcome.run) return outcome.run;
  await fenceCurrent(c, fence);
  throw conflict(`Effect ${effectId} of run ${fence.runId} is not an ambiguous effect of an earlier lease.`, {
    runId: fence.runId,
    effectId,
  });
}

/** Thrown inside a transaction to roll it back when a guard matched nothing. */
export class RollBack extends Error {}
