import type { Chunk, LineageNodeJSON } from "@openrath/core";
import {
  applyChunkOps,
  corrupt,
  DurableError,
  type MaterializedCheckpoint,
  type PlacementJSON,
  type RetentionPolicy,
  type RetentionResult,
} from "@openrath/runtime-durable";
import { sql, type Transaction } from "kysely";
import { chunkFromRow } from "./chunk-rows.js";
import { type StoreContext, toMs } from "./context.js";
import { isUuid } from "./runs.js";

interface ChainRow {
  id: unknown;
  run_id: string;
  tenant_id: string;
  seq: unknown;
  session_id: string;
  base_id: unknown;
  depth: unknown;
  chunk_ops: string;
  lineage: string;
  placement: string | null;
  next_step: string | null;
  created_at: unknown;
}

// biome-ignore lint/suspicious/noExplicitAny: raw SQL over a Kysely instance or transaction.
type Db = StoreContext["db"] | Transaction<any>;

function parse(text: string, where: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw corrupt(where, `its ${what} is not JSON`, cause);
  }
}

/** Resolves checkpoint `id` along its base chain into chunk ids, chunks and lineage. */
export async function materialize(
  c: StoreContext,
  target: number | { readonly runId: string; readonly sequence?: number },
  db: Db = c.db,
): Promise<MaterializedCheckpoint | undefined> {
  const start =
    typeof target === "number"
      ? sql`k.id = ${target}`
      : target.sequence === undefined
        ? sql`k.id = (select checkpoint_id from ${c.t.runs} where id = ${target.runId})`
        : sql`k.run_id = ${target.runId} and k.seq = ${target.sequence}`;
  // One round trip: the chain, and the chunks its lists name (ids taken from the text by a
  // pattern, so a malformed row cannot fail the query; anything it misses is fetched after).
  const result = await sql<{ chain: ChainRow[] | string | null; chunks: [string, string][] | string | null }>`
    with recursive chain as (
      select k.*, 0 as n from ${c.t.checkpoints} k where ${start}
      union all
      select p.*, chain.n + 1 from ${c.t.checkpoints} p join chain on p.id = chain.base_id
    ),
    named as (
      select distinct m[1] as id from chain, regexp_matches(chain.chunk_ops, '"([^"]*)"', 'g') as m
    )
    select
      (select json_agg(json_build_object('id', id, 'run_id', run_id, 'tenant_id', tenant_id, 'seq', seq, 'session_id', session_id,
        'base_id', base_id, 'depth', depth, 'chunk_ops', chunk_ops, 'lineage', lineage, 'placement', placement,
        'next_step', next_step, 'created_at', created_at) order by n desc) from chain) as chain,
      (select json_agg(json_build_array(k.id, k.body)) from ${c.t.chunks} k
        where k.tenant_id = (select tenant_id from chain where n = 0) and k.id in (select id from named)) as chunks`.execute(
    db,
  );
  const json = <T>(v: T | string | null): T | null => (typeof v === "string" ? (JSON.parse(v) as T) : v);
  const chain = { rows: json(result.rows[0]?.chain ?? null) ?? [] };
  const prefetched = json(result.rows[0]?.chunks ?? null) ?? [];
  const rows = chain.rows;
  const head = rows.at(-1);
  if (!head) {
    if (typeof target !== "number") return undefined;
    throw corrupt(`checkpoint ${target}`, "it does not exist");
  }
  const id = Number(head.id);
  const where = `checkpoint ${Number(head.seq)} of run ${head.run_id}`;
  if (rows[0]!.base_id !== null)
    throw corrupt(where, `its base checkpoint ${String(rows[0]!.base_id)} is missing`);
  let ids: string[] = [];
  const lineage = new Map<string, LineageNodeJSON>();
  for (const row of rows) {
    ids = applyChunkOps(ids, parse(row.chunk_ops, where, "chunk list"), where);
    const nodes = parse(row.lineage, where, "lineage");
    if (!Array.isArray(nodes)) throw corrupt(where, "its lineage is not an array");
    for (const node of nodes as LineageNodeJSON[]) {
      if (typeof node?.id !== "string") throw corrupt(where, "a lineage node has no id");
      lineage.set(node.id, node);
    }
  }
  const bodies = new Map<string, Chunk>();
  const add = (rowId: string, body: string) => {
    try {
      bodies.set(rowId, chunkFromRow(rowId, body));
    } catch (cause) {
      throw corrupt(where, `chunk ${rowId} is not JSON`, cause);
    }
  };
  for (const [rowId, body] of prefetched) add(rowId, body);
  const missing = [...new Set(ids)].filter((chunkId) => !bodies.has(chunkId));
  if (missing.length > 0) {
    const found = await sql<{ id: string; body: string }>`select id, body from ${c.t.chunks}
      where tenant_id = ${head.tenant_id} and id = any(${missing}::text[])`.execute(db);
    for (const row of found.rows) add(row.id, row.body);
  }
  const chunks: Chunk[] = ids.map((chunkId) => {
    const chunk = bodies.get(chunkId);
    if (!chunk) throw corrupt(where, `chunk ${chunkId} is missing`);
    return chunk;
  });
  const placement =
    head.placement === null ? null : (parse(head.placement, where, "placement") as PlacementJSON);
  return {
    id,
    runId: head.run_id,
    sequence: Number(head.seq),
    sessionId: head.session_id,
    nextStep: head.next_step,
    depth: Number(head.depth),
    createdAt: toMs(head.created_at) ?? 0,
    chunkIds: ids,
    chunks,
    lineage: [...lineage.values()],
    placement,
  };
}

/** See `RunStoreV1.loadCheckpoint`. */
export async function loadCheckpoint(
  c: StoreContext,
  runId: string,
  sequence?: number,
): Promise<MaterializedCheckpoint | undefined> {
  if (!isUuid(runId)) return undefined;
  return materialize(c, sequence === undefined ? { runId } : { runId, sequence });
}

/** See `RunStoreV1.findSessionHead`. */
export async function findSessionHead(
  c: StoreContext,
  tenantId: string,
  sessionIds: readonly string[],
): Promise<MaterializedCheckpoint | undefined> {
  if (sessionIds.length === 0) return undefined;
  const found = await sql<{ id: unknown }>`select id from ${c.t.checkpoints}
    where tenant_id = ${tenantId} and session_id = any(${[...sessionIds]}::text[]) order by id desc limit 1`.execute(
    c.db,
  );
  const id = found.rows[0]?.id;
  return id === undefined ? undefined : materialize(c, Number(id));
}

function stringOps(text: string): string[] {
  try {
    const ops = JSON.parse(text) as unknown[];
    return Array.isArray(ops) ? (ops.filter((op) => typeof op === "string") as string[]) : [];
  } catch {
    return [];
  }
}

/**
 * Deletes checkpoints `doomed` (and, when `runIds` is given, those runs) in one transaction:
 * first every other checkpoint whose base is doomed is rewritten as a full list (so no kept
 * checkpoint loses its chain), then the rows go, then the chunks only they introduced and no
 * kept checkpoint of the tenant lists.
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
    const dependents = await sql<{ id: unknown }>`select id from ${c.t.checkpoints}
      where base_id = any(${doomed.map(String)}::bigint[]) and not (id = any(${doomed.map(String)}::bigint[])) for update`.execute(
      tx,
    );
    for (const row of dependents.rows) {
      const full = (await materialize(c, Number(row.id), tx))!;
      await sql`update ${c.t.checkpoints} set base_id = null, depth = 0, chunk_ops = ${JSON.stringify(full.chunkIds)},
        lineage = ${JSON.stringify(full.lineage)} where id = ${full.id}`.execute(tx);
    }
    const gone = await sql<{
      chunk_ops: string;
    }>`delete from ${c.t.checkpoints} where id = any(${doomed.map(String)}::bigint[]) returning chunk_ops`.execute(
      tx,
    );
    const candidates = new Set<string>();
    for (const row of gone.rows) for (const id of stringOps(row.chunk_ops)) candidates.add(id);
    let runsDeleted = 0;
    if (runIds.length > 0) {
      const deleted = await sql`delete from ${c.t.runs} where id = any(${[...runIds]}::uuid[])`.execute(tx);
      runsDeleted = Number(deleted.numAffectedRows ?? 0);
    }
    let chunksDeleted = 0;
    if (candidates.size > 0) {
      // Every kept checkpoint's chunks are listed by it or by a checkpoint in its chain, and chains
      // are whole (dependents were just rewritten), so a chunk no kept list names is unreferenced.
      const kept = await sql<{
        chunk_ops: string;
      }>`select chunk_ops from ${c.t.checkpoints} where tenant_id = ${tenantId}`.execute(tx);
      for (const row of kept.rows) for (const id of stringOps(row.chunk_ops)) candidates.delete(id);
      if (candidates.size > 0) {
        const deleted =
          await sql`delete from ${c.t.chunks} where tenant_id = ${tenantId} and id = any(${[...candidates]}::text[])`.execute(
            tx,
          );
        chunksDeleted = Number(deleted.numAffectedRows ?? 0);
      }
    }
    return { runsDeleted, checkpointsDeleted: gone.rows.length, chunksDeleted };
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
      }>`select k.id, k.tenant_id from ${c.t.checkpoints} k join ${c.t.runs} r on r.id = k.run_id
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
  const runs = await sql<{
    id: string;
    status: string;
  }>`select id, status from ${c.t.runs} where tenant_id = ${tenantId} and session_id = ${sessionId}`.execute(
    c.db,
  );
  const active = runs.rows.find((r) => ["queued", "running", "waiting", "needs_review"].includes(r.status));
  if (active) {
    throw new DurableError(
      "session_busy",
      `Cannot erase session ${sessionId}: run ${active.id} is ${active.status}. Cancel it first.`,
      {
        details: { sessionId, runId: active.id, status: active.status },
      },
    );
  }
  const ids = runs.rows.map((r) => String(r.id));
  const cps = await sql<{
    id: unknown;
  }>`select id from ${c.t.checkpoints} where run_id = any(${ids}::uuid[])`.execute(c.db);
  return deleteCheckpoints(
    c,
    tenantId,
    cps.rows.map((r) => Number(r.id)),
    ids,
  );
}
