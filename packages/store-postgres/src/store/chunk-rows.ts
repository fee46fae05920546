import type { Chunk } from "@openrath/core";
import type { CheckpointWrite } from "@openrath/runtime-durable";
import { sql } from "kysely";

/**
 * The parameters that insert a checkpoint's new chunks: ids and bodies as two arrays for
 * `unnest`. The body is the chunk's JSON without its id (the key column holds it).
 */
export function chunkArrays(write: CheckpointWrite): { ids: string[]; bodies: string[] } {
  const ids: string[] = [];
  const bodies: string[] = [];
  for (const chunk of write.newChunks) {
    ids.push(chunk.id);
    const { id: _id, ...rest } = chunk as Chunk & Record<string, unknown>;
    bodies.push(JSON.stringify(rest));
  }
  return { ids, bodies };
}

/** A chunk back from its stored row. */
export function chunkFromRow(id: string, body: string): Chunk {
  return { id, ...(JSON.parse(body) as object) } as Chunk;
}

/** The columns of a checkpoint row for `write` (as SQL values, in `CHECKPOINT_COLUMNS` order after id, run, tenant). */
export function checkpointValues(write: CheckpointWrite) {
  return {
    seq: write.sequence,
    sessionId: write.sessionId,
    baseId: write.baseId,
    ops: JSON.stringify(write.chunkOps),
    lineage: JSON.stringify(write.lineage),
    placement: write.placement ? JSON.stringify(write.placement) : null,
    nextStep: write.nextStep,
  };
}

/** Depth of a checkpoint in its base chain: 0 without a base, else the base's depth + 1. */
export function depthSql(baseId: number | null, checkpoints: unknown) {
  return baseId === null
    ? sql<number>`0`
    : sql<number>`coalesce((select depth + 1 from ${checkpoints} where id = ${baseId}), 0)`;
}
