import { type Chunk, type LineageNodeJSON, Session, type SessionJSON } from "@openrath/core";
import { DurableError } from "../contract/durable-error.js";
import type { CheckpointWrite, ChunkOp, MaterializedCheckpoint } from "../contract/run-records.js";

/**
 * Longest base chain over a store that does not report {@link CheckpointBase.chainChunks}: a
 * checkpoint this deep is followed by one with a full chunk list.
 */
export const MAX_CHAIN_DEPTH = 256;

/**
 * A new chain starts (the checkpoint is written whole, its base `null`) when the chunk bodies stored
 * along the current one would exceed this many times the session's length, plus
 * {@link CHAIN_SLACK_CHUNKS}: after a compression or a rewrite most of the chain is no longer
 * listed, and a restore would read it all. An appending session never starts one.
 */
export const CHAIN_GROWTH_LIMIT = 4;
/** See {@link CHAIN_GROWTH_LIMIT}. */
export const CHAIN_SLACK_CHUNKS = 64;

/**
 * What the next checkpoint is encoded against: the previous checkpoint's id, its chunk ids and
 * its lineage nodes (as JSON text by id, to tell a changed node from a known one).
 */
export interface CheckpointBase {
  readonly id: number;
  /** Checkpoints behind it in its base chain. */
  readonly depth: number;
  readonly chunkIds: readonly string[];
  readonly lineage: ReadonlyMap<string, string>;
  /**
   * Chunk bodies stored along its chain (see `MaterializedCheckpoint.chainChunks`); `undefined`
   * when the store does not say, and chains are then cut by depth.
   */
  readonly chainChunks?: number;
}

/** The base a materialized checkpoint gives. */
export function baseOf(checkpoint: MaterializedCheckpoint): CheckpointBase {
  const lineage = new Map<string, string>();
  for (const node of checkpoint.lineage) lineage.set(node.id, JSON.stringify(node));
  return {
    id: checkpoint.id,
    depth: checkpoint.depth,
    chunkIds: checkpoint.chunkIds,
    lineage,
    ...(checkpoint.chainChunks === undefined ? {} : { chainChunks: checkpoint.chainChunks }),
  };
}

/**
 * Encodes `session` as a checkpoint against `base`: the chunk-id list as ranges of the base's
 * list plus new ids, only the chunks the base does not reference, and only the lineage nodes the
 * base does not have. An append-only step costs its new chunks and one range.
 *
 * @returns the write and the base the following checkpoint is encoded against (once the store
 *   has assigned this one's id).
 */
export function encodeCheckpoint(
  session: Session,
  given: CheckpointBase | null,
  fields: { readonly sequence: number; readonly stepId: string | null; readonly nextStep: string | null },
): { readonly write: CheckpointWrite; readonly next: (id: number) => CheckpointBase } {
  const json = session.toJSON();
  // Without a count of what the chain stores, a long chain is cut by depth.
  const usable = given && (given.chainChunks !== undefined || given.depth < MAX_CHAIN_DEPTH) ? given : null;
  const first = encodeAgainst(json, usable, fields);
  if (
    usable?.chainChunks === undefined ||
    usable.chainChunks + first.write.newChunks.length <=
      CHAIN_GROWTH_LIMIT * json.chunks.length + CHAIN_SLACK_CHUNKS
  )
    return first;
  // The chain would hold mostly chunks the session no longer lists: start a new one.
  return encodeAgainst(json, null, fields);
}

function encodeAgainst(
  json: SessionJSON,
  base: CheckpointBase | null,
  fields: { readonly sequence: number; readonly stepId: string | null; readonly nextStep: string | null },
): { readonly write: CheckpointWrite; readonly next: (id: number) => CheckpointBase } {
  const depth = base ? base.depth + 1 : 0;
  const baseIndex = new Map<string, number>();
  if (base) for (let i = 0; i < base.chunkIds.length; i++) baseIndex.set(base.chunkIds[i]!, i);
  const ops: ChunkOp[] = [];
  const newChunks: Chunk[] = [];
  const ids: string[] = new Array(json.chunks.length);
  let runStart = -1;
  let runLength = 0;
  const flush = () => {
    if (runLength > 0) ops.push([runStart, runLength]);
    runLength = 0;
  };
  for (let i = 0; i < json.chunks.length; i++) {
    const chunk = json.chunks[i]!;
    ids[i] = chunk.id;
    const at = baseIndex.get(chunk.id);
    if (at === undefined) {
      flush();
      ops.push(chunk.id);
      newChunks.push(chunk);
    } else if (runLength > 0 && at === runStart + runLength) {
      runLength++;
    } else {
      flush();
      runStart = at;
      runLength = 1;
    }
  }
  flush();
  const lineage: LineageNodeJSON[] = [];
  const lineageText = new Map<string, string>(base?.lineage);
  for (const node of json.lineage) {
    const text = JSON.stringify(node);
    if (base?.lineage.get(node.id) !== text) lineage.push(node);
    lineageText.set(node.id, text);
  }
  const write: CheckpointWrite = {
    sequence: fields.sequence,
    sessionId: json.id,
    baseId: base?.id ?? null,
    chunkOps: ops,
    newChunks,
    lineage,
    placement: json.placement ?? null,
    stepId: fields.stepId,
    nextStep: fields.nextStep,
  };
  const chainChunks =
    base === null
      ? newChunks.length
      : base.chainChunks === undefined
        ? undefined
        : base.chainChunks + newChunks.length;
  return {
    write,
    next: (id) => ({
      id,
      depth,
      chunkIds: ids,
      lineage: lineageText,
      ...(chainChunks === undefined ? {} : { chainChunks }),
    }),
  };
}

/**
 * Whether `op` is a chunk op's range `[start, count]` inside a base of `baseLength` chunks (a
 * non-empty run of whole positions). Stores with their own op encodings check ranges with it too.
 */
export function isChunkRange(op: unknown, baseLength: number): op is readonly [number, number] {
  return (
    Array.isArray(op) &&
    op.length === 2 &&
    Number.isInteger(op[0]) &&
    Number.isInteger(op[1]) &&
    op[0] >= 0 &&
    op[1] > 0 &&
    op[0] + op[1] <= baseLength
  );
}

/**
 * Resolves a chunk-op list against the base's chunk ids.
 *
 * @throws {DurableError} code `corrupt_checkpoint` for a range outside the base or a malformed op.
 */
export function applyChunkOps(base: readonly string[], ops: unknown, where: string): string[] {
  if (!Array.isArray(ops)) throw corrupt(where, "its chunk list is not an array");
  const out: string[] = [];
  for (const op of ops) {
    if (typeof op === "string") out.push(op);
    else if (isChunkRange(op, base.length)) {
      for (let i = op[0]; i < op[0] + op[1]; i++) out.push(base[i]!);
    } else {
      throw corrupt(
        where,
        `chunk op ${JSON.stringify(op)} is not a chunk id or a range of the base's ${base.length} chunks`,
      );
    }
  }
  return out;
}

/**
 * The Session a materialized checkpoint holds: equal to the one that was checkpointed
 * (`toJSON()` identical).
 *
 * @throws {DurableError} code `corrupt_checkpoint` when the parts do not make a valid session.
 */
export function restoreSession(checkpoint: MaterializedCheckpoint): Session {
  const json: SessionJSON = {
    format: "openrath.session",
    version: 1,
    id: checkpoint.sessionId,
    chunks: checkpoint.chunks,
    ...(checkpoint.placement ? { placement: checkpoint.placement } : {}),
    lineage: checkpoint.lineage,
  };
  try {
    return Session.fromJSON(json);
  } catch (cause) {
    throw corrupt(
      `checkpoint ${checkpoint.sequence} of run ${checkpoint.runId}`,
      (cause as Error).message,
      cause,
    );
  }
}

/** The `corrupt_checkpoint` error. */
export function corrupt(where: string, what: string, cause?: unknown): DurableError {
  return new DurableError("corrupt_checkpoint", `The stored ${where} is corrupt: ${what}.`, {
    ...(cause === undefined ? {} : { cause }),
    details: { where },
  });
}
