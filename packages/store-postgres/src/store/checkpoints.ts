import type { Chunk, LineageNodeJSON } from "@openrath/core";
import {
  type ChainContext,
  type CheckpointBody,
  contextOf,
  corrupt,
  DurableError,
  decodeBody,
  encodeBody,
  isChunkRange,
  type MaterializedCheckpoint,
  needsContext,
  offloadedArtifacts,
  packOps,
  type RetentionPolicy,
  type RetentionResult,
} from "@openrath/runtime-durable/store";
import { type RawBuilder, sql, type Transaction } from "kysely";
import { chunkFromRow, sessionHeads } from "./chunk-rows.js";
import { type StoreContext, tables, toMs } from "./context.js";
import { isUuid } from "./ids.js";

export interface ChainRow {
  id: unknown;
  run_id: string;
  tenant: string;
  seq: unknown;
  /** `0` for none. */
  base_id: unknown;
  created_at: unknown;
  body: Uint8Array;
  /** `''` for none. */
  step_id: string;
  /** `''` for none. */
  next_step: string;
}

/** A chain row read: its body and step columns. */
function bodyOf(row: ChainRow, where: string, base: () => ChainContext | undefined): CheckpointBody {
  try {
    const content = decodeBody(row.body, needsContext(row.body) ? base() : undefined);
    return { ...content, stepId: row.step_id || null, nextStep: row.next_step || null };
  } catch (cause) {
    throw corrupt(where, `checkpoint ${String(row.id)} cannot be read (${(cause as Error).message})`, cause);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: raw SQL over a Kysely instance or transaction.
type Db = StoreContext["db"] | Transaction<any>;

/**
 * Applies one stored chunk-op list to the list before it: `[start, count]` copies a range of
 * `previous`, a string is a chunk id, a number takes that many chunks of the row's own body in
 * order. An appending list (`[[0, n], …]` over the whole previous list) extends `previous` in place,
 * so a long chain of appending steps resolves in time linear in the session, not in the chain's
 * depth times its length.
 */
function applyStoredOps(previous: string[], ops: unknown, packed: readonly Chunk[], where: string): string[] {
  if (!Array.isArray(ops)) throw corrupt(where, "its chunk list is not an array");
  const length = previous.length;
  const first = ops[0] as unknown;
  const appends =
    length > 0 && Array.isArray(first) && first.length === 2 && first[0] === 0 && first[1] === length;
  const out = appends ? previous : [];
  let taken = 0;
  for (let i = appends ? 1 : 0; i < ops.length; i++) {
    const op = ops[i] as unknown;
    if (typeof op === "string") out.push(op);
    else if (typeof op === "number" && Number.isInteger(op) && op > 0 && taken + op <= packed.length) {
      for (let k = 0; k < op; k++) out.push(packed[taken++]!.id);
    } else if (isChunkRange(op, length)) {
      for (let k = op[0]; k < op[0] + op[1]; k++) out.push(previous[k]!);
    } else {
      throw corrupt(
        where,
        `chunk op ${JSON.stringify(op)} is not a chunk id, a count of its ${packed.length} packed chunks or a range of the base's ${length} chunks`,
      );
    }
  }
  if (taken !== packed.length)
    throw corrupt(where, `its list names ${taken} of the ${packed.length} chunks it packs`);
  return out;
}

/** Which checkpoint to materialize: by id, by run (latest or one sequence), or a session's head. */
export type CheckpointTarget =
  | number
  | { readonly runId: string; readonly sequence?: number }
  | { readonly tenantId: string; readonly sessionIds: readonly string[] };

/**
 * The group of 32 consecutive sequences a checkpoint of `k` belongs to: the second column of the
 * `(run_id, seq >> 5)` index (migration 4). A lookup by run and sequence names it, so the index
 * scan reads one group of the run, not all of its checkpoints.
 */
export function seqGroup(k: RawBuilder<unknown>): RawBuilder<number> {
  return sql<number>`(${k}.seq >> 5)`;
}

function startOf(c: StoreContext, target: CheckpointTarget): RawBuilder<unknown> {
  if (typeof target === "number") return sql`k.id = ${target}`;
  if ("runId" in target)
    return target.sequence === undefined
      ? sql`k.id = (select checkpoint_id from ${c.t.runs} where id = ${target.runId})`
      : sql`k.run_id = ${target.runId} and ${seqGroup(sql`k`)} = (${target.sequence}::integer >> 5) and k.seq = ${target.sequence}`;
  return sql`k.id = (select max(x.checkpoint_id) from ${sessionHeads(c, target.tenantId, target.sessionIds)} x)
      and r.tenant_id = ${target.tenantId}`;
}

/**
 * Resolves a checkpoint along its base chain into chunk ids, chunks and lineage, in one round trip
 * (rows of the first format, whose chunks live in the `chunks` table, take a second). The chain
 * only follows bases of the same tenant and ever older ids, so a corrupt base cannot loop or read
 * another tenant's chunks.
 *
 * @returns `undefined` when the target names no checkpoint.
 * @throws {DurableError} `corrupt_checkpoint` when a row of the chain cannot be resolved.
 */
export async function materialize(
  c: StoreContext,
  target: CheckpointTarget,
  db: Db = c.db,
): Promise<MaterializedCheckpoint | undefined> {
  return (await resolveChain(c, target, db))?.checkpoint;
}

/** A checkpoint resolved along its chain, with the head row's body and each row's packed chunk ids. */
interface ResolvedChain {
  readonly checkpoint: MaterializedCheckpoint;
  readonly head: CheckpointBody;
  readonly packed: Map<number, string[]>;
}

/**
 * {@link materialize}, with the head row's body (its step ids) beside the checkpoint and, by row
 * id, the ids of the chunks each row of the chain packs.
 */
async function resolveChain(
  c: StoreContext,
  target: CheckpointTarget,
  db: Db,
): Promise<ResolvedChain | undefined> {
  const result = await sql<ChainRow>`
    with recursive ${chainCte(c, sql`from ${c.t.checkpoints} k join ${c.t.runs} r on r.id = k.run_id where ${startOf(c, target)}`, sql`r.tenant_id`)}
    select id, run_id, tenant, seq, base_id, created_at, body, step_id, next_step from chain order by n desc`.execute(
    db,
  );
  return decodeChain(c, result.rows, db);
}

/**
 * The recursive CTE `chain` (for a `with recursive` list): the checkpoint rows `start` selects (a
 * `from … where …` naming the checkpoint `k` and an expression for its run's tenant), then their
 * bases, oldest last in `n`. The walk only follows bases of the same tenant and ever older ids, so
 * a corrupt base cannot loop or read another tenant's chunks. `tag` is carried down each chain
 * (`tag` column) so several chains can be read at once.
 */
export function chainCte(
  c: StoreContext,
  start: RawBuilder<unknown>,
  tenant: RawBuilder<unknown>,
  tag: RawBuilder<unknown> = sql`null::uuid`,
) {
  const { checkpoints, runs } = c.t;
  return sql`chain as (
      select k.id, k.run_id, ${tenant} as tenant, k.seq, k.base_id, k.created_at, k.body, k.step_id, k.next_step, 0 as n, ${tag} as tag
      ${start}
      union all
      select p.id, p.run_id, chain.tenant, p.seq, p.base_id, p.created_at, p.body, p.step_id, p.next_step, chain.n + 1, chain.tag
      from ${checkpoints} p join chain on p.id = chain.base_id and p.id < chain.id
      join ${runs} pr on pr.id = p.run_id and pr.tenant_id = chain.tenant
    )`;
}

/**
 * Decodes a chain of checkpoint rows (base first, the checkpoint itself last) into the checkpoint
 * it resolves to; rows of the first format take a read of their chunks through `db`.
 */
export async function decodeChain(
  c: StoreContext,
  rows: readonly ChainRow[],
  db: Db = c.db,
): Promise<ResolvedChain | undefined> {
  const last = rows.at(-1);
  if (!last) return undefined;
  const id = Number(last.id);
  const where = `checkpoint ${Number(last.seq)} of run ${last.run_id}`;
  if (Number(rows[0]!.base_id) !== 0)
    throw corrupt(where, `its base checkpoint ${String(rows[0]!.base_id)} is missing`);
  let ids: string[] = [];
  let chainChunks = 0;
  const bodies = new Map<string, Chunk>();
  const lineage = new Map<string, LineageNodeJSON>();
  let head: CheckpointBody | undefined;
  const packed = new Map<number, string[]>();
  for (const row of rows) {
    const previous = head;
    head = bodyOf(
      row,
      where,
      () =>
        previous && contextOf(previous.sessionId, previous.nextStep, ids, (chunkId) => bodies.get(chunkId)),
    );
    packed.set(
      Number(row.id),
      head.chunks.map((chunk) => chunk.id),
    );
    chainChunks += head.chunks.length;
    for (const chunk of head.chunks) bodies.set(chunk.id, chunk);
    ids = applyStoredOps(ids, head.ops, head.chunks, where);
    for (const node of head.lineage) {
      if (typeof node?.id !== "string") throw corrupt(where, "a lineage node has no id");
      lineage.set(node.id, node);
    }
  }
  // Chunks no body of the chain holds are rows of the first format's `chunks` table.
  const missing = [...new Set(ids)].filter((chunkId) => !bodies.has(chunkId));
  if (missing.length > 0) {
    const found = await sql<{ id: string; body: string }>`select id, body from ${c.t.chunks}
      where tenant_id = ${last.tenant} and id = any(${missing}::text[])`.execute(db);
    for (const row of found.rows) {
      try {
        bodies.set(row.id, chunkFromRow(row.id, row.body));
      } catch (cause) {
        throw corrupt(where, `chunk ${row.id} is not JSON`, cause);
      }
    }
  }
  const chunks: Chunk[] = ids.map((chunkId) => {
    const chunk = bodies.get(chunkId);
    if (!chunk) throw corrupt(where, `chunk ${chunkId} is missing`);
    return chunk;
  });
  // The next checkpoint encoded against this one compresses against its context (packed rows only:
  // a first-format chunk is not in the bodies a chain walk sees before it fetches them).
  if (missing.length === 0)
    c.contexts.set(
      id,
      contextOf(head!.sessionId, head!.nextStep, ids, (k) => bodies.get(k)),
    );
  return {
    head: head!,
    packed,
    checkpoint: {
      id,
      runId: last.run_id,
      sequence: Number(last.seq),
      sessionId: head!.sessionId,
      nextStep: head!.nextStep,
      depth: rows.length - 1,
      createdAt: toMs(last.created_at) ?? 0,
      chunkIds: ids,
      chunks,
      lineage: [...lineage.values()],
      placement: head!.placement,
      chainChunks,
    },
  };
}

/** See `RunStoreV1.loadCheckpoint`. */
export async function loadCheckpoint(
  c: StoreContext,
  runId: string,
  sequence?: number,
): Promise<MaterializedCheckpoint | undefined> {
  if (!isUuid(runId)) return undefined;
  if (sequence !== undefined && !(Number.isInteger(sequence) && sequence >= 0 && sequence <= 0x7fffffff))
    return undefined;
  return materialize(c, sequence === undefined ? { runId } : { runId, sequence });
}

/** See `RunStoreV1.findSessionHead`. */
export async function findSessionHead(
  c: StoreContext,
  tenantId: string,
  sessionIds: readonly string[],
): Promise<MaterializedCheckpoint | undefined> {
  if (sessionIds.length === 0) return undefined;
  return materialize(c, { tenantId, sessionIds });
}

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

/**
 * The data of the `run.checkpoint` event a checkpoint row stands for (`k` is the row): the
 * sequence, the step that completed and the next one.
 */
export function checkpointEventData(k: RawBuilder<unknown>): RawBuilder<string> {
  return sql<string>`json_build_object('sequence', ${k}.seq, 'stepId', nullif(${k}.step_id, ''), 'nextStep', nullif(${k}.next_step, ''))::text`;
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
