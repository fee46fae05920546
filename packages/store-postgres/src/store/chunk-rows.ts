import type { Chunk } from "@openrath/core";
import {
  type ChainContext,
  type CheckpointWrite,
  contextAfter,
  encodeBody,
  offloadedArtifacts,
  PREVIOUS_CHECKPOINT,
  packOps,
} from "@openrath/runtime-durable/store";
import { type RawBuilder, sql } from "kysely";
import type { StoreContext } from "./context.js";

/** A chunk back from a row of the first format's `chunks` table (its body is the JSON without the id). */
export function chunkFromRow(id: string, body: string): Chunk {
  return { id, ...(JSON.parse(body) as object) } as Chunk;
}

/** The column values of a checkpoint row for `write`. */
export interface CheckpointValues {
  readonly seq: number;
  /** For the session's head (the body holds it too). */
  readonly sessionId: string;
  readonly baseId: number | null;
  /** Session id, chunk ops, steps, lineage, placement and the new chunks, encoded. */
  readonly body: Buffer;
  readonly stepId: string | null;
  readonly nextStep: string | null;
  /** `<tenant>/<digest>` of the artifacts the new chunks' claim-check stubs name, or `null`. */
  readonly artifacts: string[] | null;
  /** What the row gives the checkpoint after it to compress against, once its id is known. */
  readonly context: ChainContext | undefined;
}

/**
 * The columns of a checkpoint row for `write`, its body compressed against the base's context when
 * this store knows it. Call `c.contexts.set(id, values.context)` once the row is committed. In a
 * batch, `previous` is the write before it (the base of a write naming `PREVIOUS_CHECKPOINT`).
 */
export function checkpointValues(
  c: StoreContext,
  write: CheckpointWrite,
  previous?: CheckpointValues,
): CheckpointValues {
  const { ops, packed } = packOps(write.chunkOps, write.newChunks);
  const artifacts: string[] = [];
  for (const chunk of packed) {
    for (const ref of offloadedArtifacts(chunk)) artifacts.push(`${ref.tenant}/${ref.digest}`);
  }
  const base = write.baseId === PREVIOUS_CHECKPOINT ? previous?.context : c.contexts.get(write.baseId);
  const body = {
    sessionId: write.sessionId,
    ops,
    chunks: packed,
    lineage: write.lineage,
    placement: write.placement,
  };
  return {
    seq: write.sequence,
    sessionId: write.sessionId,
    baseId: write.baseId,
    body: encodeBody(body, base),
    stepId: write.stepId,
    nextStep: write.nextStep,
    artifacts: artifacts.length > 0 ? artifacts : null,
    context: contextAfter(write.baseId === null ? undefined : base, { ...body, nextStep: write.nextStep }),
  };
}

/**
 * The `insert into checkpoints` of a write, for a CTE: `from` is the CTE holding the run row as
 * updated (its `id`, `tenant_id`, `checkpoint_id` and, with `event`, the `event_seq` of the
 * `run.checkpoint` event this row stands for), or a batch's row for this write (with
 * `previous_id`, the base of a write naming `PREVIOUS_CHECKPOINT`). "None" is stored as `0` or `''` (no null bitmap).
 */
export function insertCheckpoint(
  c: StoreContext,
  cp: CheckpointValues,
  from: RawBuilder<unknown>,
  event: boolean,
) {
  // Raw: an insert … select from a CTE of the enclosing statement.
  return sql`insert into ${c.t.checkpoints} (id, run_id, base_id, event_seq, seq, step_id, next_step, body)
    select f.checkpoint_id, f.id, ${cp.baseId === PREVIOUS_CHECKPOINT ? sql`f.previous_id` : (cp.baseId ?? 0)}, ${event ? sql`f.event_seq` : sql`0`}, ${cp.seq},
      ${cp.stepId ?? ""}, ${cp.nextStep ?? ""}, ${cp.body}
    from ${from} f
    returning id`;
}

/** The CTE recording the artifacts the new checkpoint's stubs name (`select 1` when there are none). */
export function insertArtifacts(c: StoreContext, cp: CheckpointValues, from: RawBuilder<unknown>) {
  if (cp.artifacts === null) return sql`select 1`;
  const tenants = cp.artifacts.map((ref) => ref.slice(0, ref.lastIndexOf("/")));
  const digests = cp.artifacts.map((ref) => ref.slice(ref.lastIndexOf("/") + 1));
  // Raw: an insert from a CTE of the enclosing statement joined to an `unnest` of two arrays.
  return sql`insert into ${c.t.artifacts} (checkpoint_id, tenant_id, digest)
    select f.checkpoint_id, a.tenant, a.digest from ${from} f, unnest(${tenants}::text[], ${digests}::text[]) as a(tenant, digest)
    on conflict do nothing`;
}

/** The upsert that makes the new checkpoint its session's head (what the next run's checkpoint 0 is encoded against). */
export function upsertHead(c: StoreContext, cp: CheckpointValues, from: RawBuilder<unknown>) {
  // Raw: a conditional upsert from a CTE of the enclosing statement.
  return sql`insert into ${c.t.heads} (tenant_id, session_id, checkpoint_id)
    select f.tenant_id, ${cp.sessionId}, f.checkpoint_id from ${from} f
    on conflict (tenant_id, session_id) do update set checkpoint_id = excluded.checkpoint_id
      where ${c.t.heads}.checkpoint_id < excluded.checkpoint_id`;
}

/**
 * The checkpoint ids of the heads of `sessionIds` in a tenant, as a subquery: one primary-key probe
 * per id. (`session_id = any($ids)` may be planned, in a generic plan, as a scan of all of the
 * tenant's heads with the array as a filter: a cost that grows with the tenant's sessions.)
 */
export function sessionHeads(c: StoreContext, tenantId: string, sessionIds: readonly string[]) {
  // Raw: a subquery for raw statements (submit's CTEs, the chain walk's start).
  const probes = [...new Set(sessionIds)].map(
    (id) =>
      sql`select h.checkpoint_id from ${c.t.heads} h where h.tenant_id = ${tenantId} and h.session_id = ${id}`,
  );
  return sql`(${probes.length > 0 ? sql.join(probes, sql` union all `) : sql`select null::bigint as checkpoint_id where false`})`;
}
