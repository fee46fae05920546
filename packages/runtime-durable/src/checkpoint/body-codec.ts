import { deflateRawSync, inflateRawSync } from "node:zlib";
import type { Chunk, LineageNodeJSON } from "@openrath/core";
import type { ChunkOp, PlacementJSON } from "../contract/run-records.js";
import { compactChunk, expandChunkIds } from "./compact-ids.js";

// The stored form of a checkpoint's body, shared by stores: a store keeps the bytes
// `encodeBody` returns beside the checkpoint's step fields, and reads them back with `decodeBody`.
// Format bytes are fixed forever (a store's old rows are read with them).

/**
 * Text that checkpoint bodies are full of, given to deflate as a preset dictionary so even a body
 * of one short chunk compresses its keys, kinds and the shape of tool calls. Fixed forever for
 * format 1: a body written with it is read with it (another dictionary is another format byte).
 */
const DICTIONARY_1 = Buffer.from(
  [
    '"reasoning":[{"provider":"',
    '"finishReason":"stop"',
    '"finishReason":"tool_calls"',
    '"requestHash":"',
    '"carriedUsage":[{"model":"',
    '"calls":',
    '"cachedPromptTokens":',
    '"cacheWriteTokens":',
    '"reasoningTokens":',
    '"untrusted":true,"source":"',
    '"kind":"event","createdAt":',
    '"name":"memory.recall","data":{',
    '"isError":true',
    '{"id":"call_',
    '","type":"function","function":{"name":"',
    '","arguments":"{\\"',
    '"toolCalls":[',
    '"kind":"tool_result","createdAt":',
    '"toolCallId":"call_',
    '"kind":"system","createdAt":',
    '"model":"',
    '"usage":{"promptTokens":',
    ',"completionTokens":',
    ',"totalTokens":',
    '"author":"',
    '"op":"fork","operator":"',
    '"parents":["',
    '"extras":{',
    '"kind":"user","createdAt":',
    '"kind":"assistant","createdAt":',
    ',"sessionId":"',
    '","content":"',
    '"c":[{"id":"',
    '},{"id":"',
    '{"s":"',
    '","o":[[0,',
    '"t":"',
  ].join(""),
  "utf8",
);

const RAW = 0;
const DEFLATE_1 = 1;
/** Deflated with {@link DICTIONARY_1} and then the base's {@link ChainContext}. */
const DEFLATE_BASE = 2;
/** {@link DEFLATE_1} with the chunks' ids compacted (`compact-ids.ts`). What is written now. */
const DEFLATE_1_IDS = 3;
/** {@link DEFLATE_BASE} with the chunks' ids compacted, the context's tail included. What is written now. */
const DEFLATE_BASE_IDS = 4;

/** Bodies and dictionaries up to this many bytes are deflated with a 4 KiB window. */
const SMALL_WINDOW = 4096;

/** How many chunks of the base's list end its context. */
const CONTEXT_CHUNKS = 2;

/**
 * What a checkpoint's base gives the next body to compress against: its session id, list length,
 * next step and last chunks, which an appending step repeats almost entirely (its chunks' session
 * id, keys, the time prefix of their ids and timestamps). A function of the base's resolved
 * session, not of how its row is encoded, so rewriting the base (retention) keeps it.
 */
export interface ChainContext {
  readonly sessionId: string;
  readonly length: number;
  readonly nextStep: string | null;
  /** The last chunks of its list (at most {@link CONTEXT_CHUNKS}). */
  readonly tail: readonly Chunk[];
}

/** The context of a resolved checkpoint, from its list's last chunks. */
export function contextOf(
  sessionId: string,
  nextStep: string | null,
  ids: readonly string[],
  bodyOf: (id: string) => Chunk | undefined,
): ChainContext | undefined {
  const tail: Chunk[] = [];
  for (const id of ids.slice(-CONTEXT_CHUNKS)) {
    const chunk = bodyOf(id);
    if (chunk === undefined) return undefined;
    tail.push(chunk);
  }
  return { sessionId, length: ids.length, nextStep, tail };
}

/**
 * The context of a checkpoint just written against `base` with stored `ops` and `packed` chunks,
 * when it follows from them (its list ends with packed chunks, or with the base's own end);
 * `undefined` otherwise, and the checkpoint after it is compressed without one.
 */
export function contextAfter(
  base: ChainContext | undefined,
  body: Pick<CheckpointBody, "sessionId" | "nextStep" | "ops" | "chunks">,
): ChainContext | undefined {
  let length = 0;
  for (const op of body.ops) {
    if (typeof op === "number") length += op;
    else if (typeof op === "string") length += 1;
    else length += op[1];
  }
  const tail: Chunk[] = [];
  let packedEnd = body.chunks.length;
  for (let i = body.ops.length - 1; i >= 0 && tail.length < CONTEXT_CHUNKS; i--) {
    const op = body.ops[i]!;
    if (typeof op === "number") {
      for (let k = 0; k < op && tail.length < CONTEXT_CHUNKS; k++) tail.unshift(body.chunks[--packedEnd]!);
    } else if (typeof op !== "string" && base !== undefined && op[0] + op[1] === base.length) {
      // A range ending where the base's list ends: its last chunks are the base's tail.
      for (let k = 0; k < op[1] && tail.length < CONTEXT_CHUNKS; k++) {
        const chunk = base.tail[base.tail.length - 1 - k];
        if (chunk === undefined) return undefined;
        tail.unshift(chunk);
      }
    } else return undefined;
  }
  if (tail.length < Math.min(CONTEXT_CHUNKS, length)) return undefined;
  return { sessionId: body.sessionId, length, nextStep: body.nextStep, tail };
}

function dictionaryFor(context: ChainContext, compactIds: boolean): Buffer {
  const text = JSON.stringify({
    s: context.sessionId,
    o: [[0, context.length]],
    ...(context.nextStep === null ? {} : { t: context.nextStep }),
    c: compactIds ? context.tail.map(compactChunk) : context.tail,
  });
  return Buffer.concat([DICTIONARY_1, Buffer.from(text, "utf8")]);
}

/** What a checkpoint's stored body holds. */
export interface BodyContent {
  readonly sessionId: string;
  /** The chunk ops as stored (see {@link packOps}). */
  readonly ops: readonly (ChunkOp | number)[];
  /** The chunks the checkpoint introduces, in the order its list first names them. */
  readonly chunks: readonly Chunk[];
  readonly lineage: readonly LineageNodeJSON[];
  readonly placement: PlacementJSON | null;
}

/** A stored checkpoint read back: its body and the step fields stored beside it. */
export interface CheckpointBody extends BodyContent {
  readonly stepId: string | null;
  readonly nextStep: string | null;
}

function bodyJson(body: BodyContent, chunks: readonly Chunk[]): Buffer {
  const json: Record<string, unknown> = { s: body.sessionId, o: body.ops };
  if (body.placement !== null) json.p = body.placement;
  if (body.lineage.length > 0) json.l = body.lineage;
  if (chunks.length > 0) json.c = chunks;
  return Buffer.from(JSON.stringify(json), "utf8");
}

/**
 * A checkpoint's body as one value: its session id, chunk ops, new lineage nodes, placement and
 * the chunks it introduces (ids included, key order as given, so reading it back
 * gives the same objects) as one JSON text, deflated with {@link DICTIONARY_1} when that is
 * smaller, the chunks' ids compacted first (`compact-ids.ts`); the first byte names the format.
 * One row per checkpoint, no row per chunk: a row's and an index entry's overhead cost more than a
 * short message, and the chunks of one step share their session id, keys and ids' time prefix,
 * which deflate folds away.
 */
export function encodeBody(body: BodyContent, base?: ChainContext): Buffer {
  const compact = bodyJson(body, body.chunks.map(compactChunk));
  const format = base === undefined ? DEFLATE_1_IDS : DEFLATE_BASE_IDS;
  const dictionary = base === undefined ? DICTIONARY_1 : dictionaryFor(base, true);
  // A small body needs no 32 KiB window (its setup costs more than the compression): 4 KiB holds
  // it and its dictionary. Any window inflates with the default one.
  const small = compact.length + dictionary.length <= SMALL_WINDOW;
  const deflated = deflateRawSync(
    compact,
    small ? { dictionary, windowBits: 12, memLevel: 5 } : { dictionary },
  );
  // Deflate that does not beat the compact text (a tiny body) is not worth it: the plain text is stored.
  return deflated.length < compact.length
    ? Buffer.concat([Buffer.of(format), deflated])
    : Buffer.concat([Buffer.of(RAW), bodyJson(body, body.chunks)]);
}

/** Whether the body was compressed against its base's context (decoding it needs that context). */
export function needsContext(bytes: Uint8Array): boolean {
  return bytes[0] === DEFLATE_BASE || bytes[0] === DEFLATE_BASE_IDS;
}

/**
 * A body back; `base` is the context of the checkpoint's base (needed when {@link needsContext}).
 *
 * @throws a plain `Error` saying what is wrong (the caller reports it as corrupt).
 */
export function decodeBody(bytes: Uint8Array, base?: ChainContext): BodyContent {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const format = buffer[0];
  const rest = buffer.subarray(1);
  let text: string;
  if (format === RAW) text = rest.toString("utf8");
  else if (format === DEFLATE_1 || format === DEFLATE_1_IDS)
    text = inflateRawSync(rest, { dictionary: DICTIONARY_1 }).toString("utf8");
  else if (format === DEFLATE_BASE || format === DEFLATE_BASE_IDS) {
    if (base === undefined) throw new Error("the body is compressed against a base that is not there");
    const dictionary = dictionaryFor(base, format === DEFLATE_BASE_IDS);
    text = inflateRawSync(rest, { dictionary }).toString("utf8");
  } else throw new Error(`unknown body format ${String(format)}`);
  const json = JSON.parse(text) as Record<string, unknown>;
  if (typeof json?.s !== "string") throw new Error("the body has no session id");
  // A body of format 0 or 1 written from an older layout may hold its fields' JSON texts as strings
  // (store-postgres's migration 3 copied its columns so).
  const field = (value: unknown, name: string) => {
    if (typeof value !== "string") return value;
    try {
      return JSON.parse(value) as unknown;
    } catch {
      throw new Error(`its ${name} is not JSON`);
    }
  };
  const ops = field(json.o, "chunk list");
  if (!Array.isArray(ops)) throw new Error("its chunk list is not an array");
  const chunks = json.c ?? [];
  if (!Array.isArray(chunks)) throw new Error("its chunks are not an array");
  if (format === DEFLATE_1_IDS || format === DEFLATE_BASE_IDS) expandChunkIds(chunks);
  else {
    for (const chunk of chunks) {
      if (typeof (chunk as { id?: unknown })?.id !== "string") throw new Error("a chunk of it has no id");
    }
  }
  const lineage = field(json.l, "lineage") ?? [];
  if (!Array.isArray(lineage)) throw new Error("its lineage is not an array");
  return {
    sessionId: json.s,
    ops: ops as (ChunkOp | number)[],
    chunks: chunks as Chunk[],
    lineage: lineage as LineageNodeJSON[],
    placement: (field(json.p, "placement") as PlacementJSON | null | undefined) ?? null,
  };
}

/**
 * A checkpoint's chunk ops as stored: the new chunks (those of `newChunks`, each once, in the
 * order the list first names them) go into the body, and a run of their ids in the list is stored
 * as its length, so an appending step's list is `[[0, n], k]` however long the ids are. Any other
 * id (a chunk listed twice) stays a string.
 */
export function packOps(
  ops: readonly ChunkOp[],
  newChunks: readonly Chunk[],
): { readonly ops: (ChunkOp | number)[]; readonly packed: Chunk[] } {
  const pending = new Map<string, Chunk>();
  for (const chunk of newChunks) if (!pending.has(chunk.id)) pending.set(chunk.id, chunk);
  const packed: Chunk[] = [];
  const out: (ChunkOp | number)[] = [];
  let run = 0;
  const flush = () => {
    if (run > 0) out.push(run);
    run = 0;
  };
  for (const op of ops) {
    if (typeof op === "string") {
      const chunk = pending.get(op);
      if (chunk !== undefined) {
        pending.delete(op);
        packed.push(chunk);
        run++;
        continue;
      }
    }
    flush();
    out.push(op);
  }
  flush();
  return { ops: out, packed };
}
