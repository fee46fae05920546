import type { Chunk } from "../chunk.js";
import { OpenRathError } from "../errors.js";
import { addChunkUsage, carriesUsage, type Usage, ZERO_USAGE } from "../usage.js";
import { IdIndex } from "./id-index.js";
import { frozenCopy } from "./json-checks.js";
import { PersistentVector } from "./persistent-vector.js";

const sameId = (x: Chunk, y: Chunk) => x.id === y.id;

/**
 * A session's transcript: a persistent vector of chunks, an index from chunk id to first
 * position, and the usage total, all immutable and all updated incrementally.
 *
 * - append: O(1) amortized (O(log₃₂ n) once every 32 chunks, when a full tail moves into the trie
 *   and its 32 ids into the index). Usage adds the new chunks' usage.
 * - `at`, `indexOf`: O(log₃₂ n). `length`, `usage`: O(1).
 * - Sharing: a fork holds the same list (O(1)); versions made from it never write into anything
 *   another version can see, so a dropped version frees what it alone added.
 *
 * The id index covers the trie part; the tail (at most 32 chunks) is searched directly.
 */
export class ChunkList {
  static readonly EMPTY: ChunkList = new ChunkList(PersistentVector.EMPTY, IdIndex.EMPTY, ZERO_USAGE);

  private flat: readonly Chunk[] | undefined;
  private frozenUsage: Usage | undefined;

  private constructor(
    private readonly vector: PersistentVector<Chunk>,
    /** Ids of the chunks in `vector`'s trie (positions below `vector.tailOffset`). */
    private readonly ids: IdIndex,
    /** Usage summed over the distinct chunk ids held; internal, never handed out (it is not frozen). */
    private readonly total: Usage,
  ) {}

  /** Usage summed over the distinct chunk ids held, frozen. O(1). */
  get usage(): Usage {
    if (this.total === ZERO_USAGE) return ZERO_USAGE;
    this.frozenUsage ??= frozenCopy(this.total);
    return this.frozenUsage;
  }

  /**
   * A list of `chunks`. A chunk id may repeat only for the same chunk (a `concat` merge holds
   * chunks twice); a repeat reuses the first chunk object. O(n).
   *
   * @throws {OpenRathError} code `invalid_chunk` when two different chunks share an id, with
   *   `details.index` (the second) and `details.firstIndex`.
   */
  static from(chunks: readonly Chunk[]): ChunkList {
    if (chunks.length === 0) return ChunkList.EMPTY;
    const first = new Map<string, number>();
    let items = chunks;
    let usage = ZERO_USAGE;
    for (let i = 0; i < chunks.length; i++) {
      const chunk = chunks[i]!;
      const seen = first.get(chunk.id);
      if (seen === undefined) {
        first.set(chunk.id, i);
        usage = addChunkUsage(usage, chunk);
        continue;
      }
      const original = items[seen]!;
      if (!sameChunk(original, chunk)) throw conflictingId(chunk.id, seen, i);
      if (items === chunks) items = chunks.slice();
      (items as Chunk[])[i] = original;
    }
    return ChunkList.EMPTY.grow(PersistentVector.from(items), usage);
  }

  get length(): number {
    return this.vector.length;
  }

  /** The chunk at `index` (negative counts from the end), or `undefined`. */
  at(index: number): Chunk | undefined {
    return this.vector.at(index < 0 ? index + this.vector.length : index);
  }

  /** Position of the first chunk with id `id`, or -1. O(log₃₂ n). */
  indexOf(id: string): number {
    const found = this.ids.get(id);
    if (found !== undefined) return found;
    const offset = this.vector.tailOffset;
    if (offset === this.vector.length) return -1;
    const tail = this.vector.leafFor(offset);
    for (let i = 0; i < tail.length; i++) if (tail[i]!.id === id) return offset + i;
    return -1;
  }

  /**
   * A lookup of first positions by chunk id for many queries in a row (a merge): the tail is put in
   * a map once rather than searched per query.
   */
  positions(): (id: string) => number {
    const tail = new Map<string, number>();
    this.vector.forEach(this.vector.tailOffset, this.vector.length, (c, i) => {
      if (!tail.has(c.id)) tail.set(c.id, i);
    });
    const ids = this.ids;
    return (id) => ids.get(id) ?? tail.get(id) ?? -1;
  }

  /**
   * A new list with `chunks` after this one's.
   *
   * @param distinct - the caller guarantees that none of `chunks` is in this list and that no id
   *   repeats among them, so every chunk's usage counts without looking it up. Otherwise a chunk
   *   whose id is already held (a copied chunk) adds no usage again.
   */
  append(chunks: readonly Chunk[], distinct: boolean): ChunkList {
    if (chunks.length === 0) return this;
    let usage = this.total;
    if (distinct) {
      for (let i = 0; i < chunks.length; i++) usage = addChunkUsage(usage, chunks[i]!);
    } else {
      const batch = new Set<string>();
      for (let i = 0; i < chunks.length; i++) {
        const chunk = chunks[i]!;
        if (!carriesUsage(chunk)) continue;
        if (this.indexOf(chunk.id) >= 0 || batch.has(chunk.id)) continue;
        batch.add(chunk.id);
        usage = addChunkUsage(usage, chunk);
      }
    }
    const vector = chunks.length === 1 ? this.vector.push(chunks[0]!) : this.vector.pushAll(chunks);
    return this.grow(vector, usage);
  }

  /** Chunks from `start` (clamped to `[0, length]`) to the end, without materializing an array. */
  chunksFrom(start: number): IterableIterator<Chunk> {
    return this.vector.values(Math.min(Math.max(0, start), this.vector.length));
  }

  /** Calls `fn` with each chunk from `start` to the end, in order. */
  forEach(start: number, fn: (chunk: Chunk, index: number) => void): void {
    this.vector.forEach(start, this.vector.length, fn);
  }

  /** A frozen array of all chunks, built on first call and then shared by every holder of this list. */
  toArray(): readonly Chunk[] {
    this.flat ??= Object.freeze(this.vector.slice());
    return this.flat;
  }

  /** A new (unshared, unfrozen) array of the chunks from `start` on. */
  slice(start = 0): Chunk[] {
    return start === 0 && this.flat ? this.flat.slice() : this.vector.slice(start);
  }

  /**
   * How many leading chunks this list and `other` share: through common structure without
   * comparing chunks (O(log₃₂ n)), then by chunk id from where the common structure ends (lists
   * restored from JSON share no structure: O(prefix) for them).
   */
  sharedPrefix(other: ChunkList): number {
    return PersistentVector.sharedPrefix(this.vector, other.vector, sameId);
  }

  /**
   * Rejects chunks (about to be appended) that reuse the id of a different chunk held here or
   * earlier in `made`. The same chunk again is fine.
   *
   * @throws {OpenRathError} code `invalid_chunk` naming both positions.
   */
  checkCopied(made: readonly Chunk[]): void {
    const batch = new Map<string, number>();
    made.forEach((chunk, k) => {
      const index = this.length + k;
      const held = this.indexOf(chunk.id);
      if (held >= 0 && !sameChunk(this.at(held)!, chunk)) throw conflictingId(chunk.id, held, index);
      const earlier = batch.get(chunk.id);
      if (earlier !== undefined && !sameChunk(made[earlier - this.length]!, chunk))
        throw conflictingId(chunk.id, earlier, index);
      if (earlier === undefined) batch.set(chunk.id, index);
    });
  }

  /**
   * The three-way merge of `other` into this list: this list unchanged, then the chunks of
   * `other` this list does not hold (by id), in `other`'s order, each once.
   *
   * Cost: O(log₃₂ n) to skip the prefix both share (see {@link sharedPrefix}), then one id lookup,
   * O(log₃₂ n), per chunk of `other` after that prefix: O(log n + m·log n) where m is what `other`
   * holds beyond the shared prefix (its own new chunks, plus chunks it got from merges), however
   * long either history is.
   *
   * @returns the list; `shared`, the distinct chunks of `other` this list already held; `added`,
   *   how many were appended.
   */
  mergeThreeWay(other: ChunkList): { list: ChunkList; shared: number; added: number } {
    const prefix = this.sharedPrefix(other);
    if (prefix === other.length) return { list: this, shared: prefix, added: 0 };
    const position = this.positions();
    const seen = new Set<string>();
    const added: Chunk[] = [];
    let sharedAfter = 0;
    other.forEach(prefix, (chunk) => {
      if (seen.has(chunk.id)) return;
      seen.add(chunk.id);
      const at = position(chunk.id);
      if (at < 0) added.push(chunk);
      // Found before the prefix only if `other` repeats a prefix chunk (a concat); counted there.
      else if (at >= prefix) sharedAfter++;
    });
    return { list: this.append(added, true), shared: prefix + sharedAfter, added: added.length };
  }

  /** This list's successor holding `vector`: indexes the chunks that moved into the trie. */
  private grow(vector: PersistentVector<Chunk>, usage: Usage): ChunkList {
    let ids = this.ids;
    for (let i = this.vector.tailOffset; i < vector.tailOffset; i += 32)
      ids = ids.withIds(vector.leafFor(i), i);
    return new ChunkList(vector, ids, usage);
  }
}

/** Whether two chunks are the same chunk: the same object, or equal field by field. */
export function sameChunk(a: Chunk, b: Chunk): boolean {
  // createChunk writes fields in one fixed order, so equal chunks serialize equally.
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

/** The `invalid_chunk` error for chunk `index` reusing the id of a different chunk at `firstIndex`. */
export function conflictingId(id: string, firstIndex: number, index: number): OpenRathError {
  return new OpenRathError(
    "invalid_chunk",
    `Chunk ${index} has id ${JSON.stringify(id)}, which chunk ${firstIndex} already uses for a different chunk. A chunk id names one chunk; give the new chunk its own id (or none).`,
    { details: { id, index, firstIndex } },
  );
}
