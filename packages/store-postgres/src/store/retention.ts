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

/** The terminal statuses, as literals (retention touches only ended runs). */
const TERMINAL = ["succeeded", "failed", "cancelled", "timed_out"].map((s) => sql.lit(s));

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
  return c.db.transaction().execute(async (tx) => {
    if (doomed.length === 0 && runIds.length === 0)
      return { runsDeleted: 0, checkpointsDeleted: 0, chunksDeleted: 0 };
    const doomedIds = doomed.map(String);
    // `= any(array)`, not `in (…)`: one statement text (one prepared statement) for any count.
    const doomedAny = sql<string>`any(${doomedIds}::bigint[])`;
    const runsAny = sql<string>`any(${[...runIds]}::uuid[])`;
    const dependents = await tables(c, tx)
      .selectFrom("checkpoints")
      .select("id")
      .where("base_id", "=", doomedAny)
      .where((eb) => eb.not(eb("id", "=", doomedAny)))
      .orderBy("id")
      .forUpdate()
      .execute();
    const kept = new Set<string>();
    for (const row of dependents) {
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
      await tables(c, tx)
        .updateTable("checkpoints")
        .set({ base_id: sql.lit(0), body })
        .where("id", "=", full.id)
        .execute();
      // It now packs stubs its doomed base held: it names their artifacts itself.
      const refs = packed.flatMap((chunk) => offloadedArtifacts(chunk));
      // Raw: an insert … select from an `unnest` of two arrays.
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
    await tables(c, tx)
      .insertInto("run_events")
      .columns(["run_id", "seq", "type", "data", "at"])
      .expression((eb) =>
        eb
          .selectFrom("checkpoints as k")
          .select([
            "k.run_id",
            "k.event_seq",
            sql.lit("run.checkpoint").as("type"),
            checkpointEventData(sql`k`).as("data"),
            "k.created_at",
          ])
          .where("k.id", "=", doomedAny)
          .where("k.event_seq", ">", sql.lit(0))
          .where((eb) => eb.not(eb("k.run_id", "=", runsAny))),
      )
      .onConflict((oc) => oc.doNothing())
      .execute();
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
      const deleted = await tables(c, tx).deleteFrom("runs").where("id", "=", runsAny).executeTakeFirst();
      runsDeleted = Number(deleted.numDeletedRows);
    }
    let chunksDeleted = chunksGone;
    if (candidates.size > 0) {
      // Every kept checkpoint's chunks are listed by it or by a checkpoint in its chain, and chains
      // are whole (dependents were just rewritten), so a chunk no kept list names is unreferenced.
      const remaining = await tables(c, tx)
        .selectFrom("checkpoints as k")
        .innerJoin("runs as r", "r.id", "k.run_id")
        .select("k.body")
        .where("r.tenant_id", "=", tenantId)
        .where(sql<boolean>`get_byte(k.body, 0) = 0`)
        .execute();
      for (const row of remaining) for (const id of firstFormatIds(row.body)) candidates.delete(id);
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
      const old = await tables(c)
        .selectFrom("runs")
        .select(["id", "tenant_id"])
        .where("workflow", "=", policy.workflow)
        .where("ended_at", "is not", null)
        .where(
          "ended_at",
          "<",
          sql<Date>`now() - ${Math.max(0, policy.keepForMs)} * interval '1 millisecond'`,
        )
        .where("status", "in", TERMINAL)
        .execute();
      for (const [tenant, ids] of groupBy(old)) {
        const cps = await checkpointsOf(c, ids);
        total = add(total, await deleteCheckpoints(c, tenant, cps, ids));
      }
    }
    if (policy.keepLastCheckpoints !== undefined) {
      const keep = Math.max(1, Math.floor(policy.keepLastCheckpoints));
      const old = await tables(c)
        .selectFrom("checkpoints as k")
        .innerJoin("runs as r", "r.id", "k.run_id")
        .select(["k.id", "r.tenant_id"])
        .where("r.workflow", "=", policy.workflow)
        .where("r.status", "in", TERMINAL)
        .where("k.seq", "<=", sql<number>`r.checkpoint_seq - ${keep}`)
        .execute();
      const byTenant = new Map<string, number[]>();
      for (const row of old)
        byTenant.set(row.tenant_id, [...(byTenant.get(row.tenant_id) ?? []), Number(row.id)]);
      for (const [tenant, ids] of byTenant) total = add(total, await deleteCheckpoints(c, tenant, ids, []));
    }
  }
  return total;
}

/** The ids of the checkpoints of runs `ids`. */
async function checkpointsOf(c: StoreContext, ids: readonly string[]): Promise<number[]> {
  const rows = await tables(c)
    .selectFrom("checkpoints")
    .select("id")
    .where("run_id", "=", sql<string>`any(${[...ids]}::uuid[])`)
    .execute();
  return rows.map((r) => Number(r.id));
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
  return deleteCheckpoints(c, tenantId, await checkpointsOf(c, ids), ids);
}
