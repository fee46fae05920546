import {
  DurableError,
  decodeBody,
  encodeBody,
  offloadedArtifacts,
  packOps,
  type RetentionPolicy,
  type RetentionResult,
} from "@openrath/runtime-durable/store";
import { sql } from "kysely";
import { checkpointEventData, materialize, resolveChain } from "./checkpoints.js";
import { type StoreContext, tables } from "./context.js";

/** Retention and erasure: deleting checkpoints and runs without breaking the chains that stay. */

/**
 * The chunk ids a plain-JSON body names by id: for a row copied from the first format, the chunks
 * it keeps in the `chunks` table (any other row's are packed; naming them too is only cautious).
 */
function firstFormatIds(body: Uint8Array): string[] {
  if (body[0] !== 0) return [];
  try {
    return decodeBody(body).ops.filter((op): op is string => typeof op === "string");
  } catch {
    return [];
  }
}

/**
 * Deletes checkpoints `doomed` (and, when `runIds` is given, those runs) in one transaction:
 * first every other checkpoint whose base is doomed is rewritten whole (its chunks packed in its
 * own row, no base), so no kept checkpoint loses its chain; the `run.checkpoint` events of doomed
 * rows of kept runs move into `run_events`, so the event log stays gap-free; then the rows go, and
 * the first format's chunk rows only they named and no kept checkpoint of the tenant lists.
 *
 * `chunksDeleted` counts the chunk bodies no longer stored anywhere: those of the deleted rows,
 * less what the rewritten checkpoints now hold.
 */
async function deleteCheckpoints(
  c: StoreContext,
  tenantId: string,
  doomed: readonly number[],
  runIds: readonly string[],
): Promise<RetentionResult> {
  const { checkpoints, runs, events } = c.t;
  return c.db.transaction().execute(async (tx) => {
    if (doomed.length === 0 && runIds.length === 0)
      return { runsDeleted: 0, checkpointsDeleted: 0, chunksDeleted: 0 };
    const doomedIds = doomed.map(String);
    const dependents = await sql<{ id: unknown }>`select id from ${checkpoints}
      where base_id = any(${doomedIds}::bigint[]) and not (id = any(${doomedIds}::bigint[])) order by id for update`.execute(
      tx,
    );
    const kept = new Set<string>();
    for (const row of dependents.rows) {
      const full = (await materialize(c, Number(row.id), tx))!;
      for (const chunkId of full.chunkIds) kept.add(chunkId);
      const { ops, packed } = packOps(full.chunkIds, full.chunks);
      const body = encodeBody({
        sessionId: full.sessionId,
        ops,
        chunks: packed,
        lineage: full.lineage,
        placement: full.placement,
      });
      await sql`update ${checkpoints} set base_id = 0, body = ${body} where id = ${full.id}`.execute(tx);
      // It now packs stubs its doomed base held: it names their artifacts itself.
      const refs = packed.flatMap((chunk) => offloadedArtifacts(chunk));
      if (refs.length > 0)
        await sql`insert into ${c.t.artifacts} (checkpoint_id, tenant_id, digest)
          select ${full.id}, a.tenant, a.digest
          from unnest(${refs.map((r) => r.tenant)}::text[], ${refs.map((r) => r.digest)}::text[]) as a(tenant, digest)
          on conflict do nothing`.execute(tx);
    }
    // What the doomed rows pack (their bodies read along their chains, newest first, each chain once).
    const packedGone = new Map<number, string[]>();
    for (const id of [...doomed].sort((a, b) => b - a)) {
      if (packedGone.has(id)) continue;
      const resolved = await resolveChain(c, id, tx).catch(() => undefined);
      for (const [rowId, ids] of resolved?.packed ?? []) packedGone.set(rowId, ids);
    }
    // The run.checkpoint events doomed rows stand for move into run_events (unless their run goes too).
    await sql`insert into ${events} (run_id, seq, type, data, at)
      select k.run_id, k.event_seq, 'run.checkpoint', ${checkpointEventData(sql`k`)}, k.created_at from ${checkpoints} k
      where k.id = any(${doomedIds}::bigint[]) and k.event_seq > 0 and not (k.run_id = any(${[...runIds]}::uuid[]))
      on conflict do nothing`.execute(tx);
    // `= any(array)`, not `in (…)`: one statement text (one prepared statement) for any count.
    const doomedAny = sql<string>`any(${doomedIds}::bigint[])`;
    const gone = await tables(c, tx)
      .deleteFrom("checkpoints")
      .where("id", "=", doomedAny)
      .returning(["id", "body"])
      .execute();
    await tables(c, tx).deleteFrom("session_heads").where("checkpoint_id", "=", doomedAny).execute();
    const candidates = new Set<string>();
    let chunksGone = 0;
    for (const row of gone) {
      for (const chunkId of packedGone.get(Number(row.id)) ?? []) if (!kept.has(chunkId)) chunksGone++;
      for (const chunkId of firstFormatIds(row.body)) candidates.add(chunkId);
    }
    let runsDeleted = 0;
    if (runIds.length > 0) {
      const deleted = await tables(c, tx)
        .deleteFrom("runs")
        .where("id", "=", sql<string>`any(${[...runIds]}::uuid[])`)
        .executeTakeFirst();
      runsDeleted = Number(deleted.numDeletedRows);
    }
    let chunksDeleted = chunksGone;
    if (candidates.size > 0) {
      // Every kept checkpoint's chunks are listed by it or by a checkpoint in its chain, and chains
      // are whole (dependents were just rewritten), so a chunk no kept list names is unreferenced.
      const remaining = await sql<{
        body: Uint8Array;
      }>`select k.body from ${checkpoints} k join ${runs} r on r.id = k.run_id
        where r.tenant_id = ${tenantId} and get_byte(k.body, 0) = 0`.execute(tx);
      for (const row of remaining.rows) for (const id of firstFormatIds(row.body)) candidates.delete(id);
      if (candidates.size > 0) {
        const deleted = await tables(c, tx)
          .deleteFrom("chunks")
          .where("tenant_id", "=", tenantId)
          .where("id", "=", sql<string>`any(${[...candidates]}::text[])`)
          .executeTakeFirst();
        chunksDeleted += Number(deleted.numDeletedRows);
      }
    }
    return { runsDeleted, checkpointsDeleted: gone.length, chunksDeleted };
  });
}

function add(a: RetentionResult, b: RetentionResult): RetentionResult {
  return {
    runsDeleted: a.runsDeleted + b.runsDeleted,
    checkpointsDeleted: a.checkpointsDeleted + b.checkpointsDeleted,
    chunksDeleted: a.chunksDeleted + b.chunksDeleted,
  };
}

/** See `RunStoreV1.applyRetention`. Only terminal runs are touched. */
export async function applyRetention(
  c: StoreContext,
  policies: readonly RetentionPolicy[],
): Promise<RetentionResult> {
  let total: RetentionResult = { runsDeleted: 0, checkpointsDeleted: 0, chunksDeleted: 0 };
  for (const policy of policies) {
    if (policy.keepForMs !== undefined) {
      const old = await sql<{ id: string; tenant_id: string }>`select id, tenant_id from ${c.t.runs}
        where workflow = ${policy.workflow} and ended_at is not null
        and ended_at < now() - ${Math.max(0, policy.keepForMs)} * interval '1 millisecond'
        and status in ('succeeded', 'failed', 'cancelled', 'timed_out')`.execute(c.db);
      for (const [tenant, ids] of groupBy(old.rows)) {
        const cps = await sql<{
          id: unknown;
        }>`select id from ${c.t.checkpoints} where run_id = any(${ids}::uuid[])`.execute(c.db);
        total = add(
          total,
          await deleteCheckpoints(
            c,
            tenant,
            cps.rows.map((r) => Number(r.id)),
            ids,
          ),
        );
      }
    }
    if (policy.keepLastCheckpoints !== undefined) {
      const keep = Math.max(1, Math.floor(policy.keepLastCheckpoints));
      const old = await sql<{
        id: unknown;
        tenant_id: string;
      }>`select k.id, r.tenant_id from ${c.t.checkpoints} k join ${c.t.runs} r on r.id = k.run_id
        where r.workflow = ${policy.workflow} and r.status in ('succeeded', 'failed', 'cancelled', 'timed_out')
        and k.seq <= r.checkpoint_seq - ${keep}`.execute(c.db);
      const byTenant = new Map<string, number[]>();
      for (const row of old.rows)
        byTenant.set(row.tenant_id, [...(byTenant.get(row.tenant_id) ?? []), Number(row.id)]);
      for (const [tenant, ids] of byTenant) total = add(total, await deleteCheckpoints(c, tenant, ids, []));
    }
  }
  return total;
}

function groupBy(rows: readonly { id: string; tenant_id: string }[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const row of rows) out.set(row.tenant_id, [...(out.get(row.tenant_id) ?? []), String(row.id)]);
  return out;
}

/** See `RunStoreV1.eraseSession`. */
export async function eraseSession(
  c: StoreContext,
  tenantId: string,
  sessionId: string,
): Promise<RetentionResult> {
  const runs = await tables(c)
    .selectFrom("runs")
    .select(["id", "status"])
    .where("tenant_id", "=", tenantId)
    .where("session_id", "=", sessionId)
    .execute();
  const active = runs.find((r) => ["queued", "running", "waiting", "needs_review"].includes(r.status));
  if (active) {
    throw new DurableError(
      "session_busy",
      `Cannot erase session ${sessionId}: run ${active.id} is ${active.status}. Cancel it first.`,
      {
        details: { sessionId, runId: active.id, status: active.status },
      },
    );
  }
  const ids = runs.map((r) => String(r.id));
  const cps = await tables(c)
    .selectFrom("checkpoints")
    .select("id")
    .where("run_id", "=", sql<string>`any(${ids}::uuid[])`)
    .execute();
  return deleteCheckpoints(
    c,
    tenantId,
    cps.map((r) => Number(r.id)),
    ids,
  );
}
