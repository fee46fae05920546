import type { Chunk, LineageNodeJSON } from "@openrath/core";
import {
  type ChainContext,
  type CheckpointBody,
  contextOf,
  corrupt,
  decodeBody,
  isChunkRange,
  type MaterializedCheckpoint,
  needsContext,
} from "@openrath/runtime-durable/store";
import { type RawBuilder, sql, type Transaction } from "kysely";
import type { Database } from "../schema.js";
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

type Db = StoreContext["db"] | Transaction<Database>;

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
export async function resolveChain(
  c: StoreContext,
  target: CheckpointTarget,
  db: Db,
): Promise<ResolvedChain | undefined> {
  // Raw: a recursive CTE.
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
  // Raw: a recursive CTE, spliced into raw statements (the chain read, the claim on a server).
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
    const found = await tables(c, db)
      .selectFrom("chunks")
      .select(["id", "body"])
      .where("tenant_id", "=", last.tenant)
      .where("id", "=", sql<string>`any(${missing}::text[])`)
      .execute();
    for (const row of found) {
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
 * The data of the `run.checkpoint` event a checkpoint row stands for (`k` is the row): the
 * sequence, the step that completed and the next one.
 */
export function checkpointEventData(k: RawBuilder<unknown>): RawBuilder<string> {
  return sql<string>`json_build_object('sequence', ${k}.seq, 'stepId', nullif(${k}.step_id, ''), 'nextStep', nullif(${k}.next_step, ''))::text`;
}
