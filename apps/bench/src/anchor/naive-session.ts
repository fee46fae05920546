import { randomUUID } from "node:crypto";
import { type Chunk, type ChunkInput, createChunk } from "@openrath/core";

/**
 * The anchor the benchmarks compare against: an immutable session that copies its whole chunk
 * array on every operation, as the Python original copies its table. Chunks are stamped with the
 * same `createChunk` as the real Session, so the two differ only in how they store the transcript.
 *
 * The arrays are read-only by type and never written after construction, but not `Object.freeze`d:
 * V8 copies a frozen array element by element on a slow path (`slice` of a frozen 4,000-chunk array
 * takes about 40 times longer), which would measure that quirk instead of the copy and flatter core.
 */
export class NaiveSession {
  private constructor(
    /** A random UUID, new for every fork and merge. */
    readonly id: string,
    /** Ids of the sessions this one was forked or merged from. */
    readonly parents: readonly string[],
    /** All chunks, in an array owned by this session alone. */
    readonly chunks: readonly Chunk[],
  ) {}

  /** An empty root session. */
  static empty(): NaiveSession {
    return new NaiveSession(randomUUID(), [], []);
  }

  /** Number of chunks. */
  get length(): number {
    return this.chunks.length;
  }

  /** Same id, a copy of every chunk plus `input`: O(n). */
  append(input: ChunkInput): NaiveSession {
    return new NaiveSession(this.id, this.parents, this.chunks.concat([createChunk(input, this.id)]));
  }

  /** New id, a copy of every chunk: O(n). */
  fork(): NaiveSession {
    return new NaiveSession(randomUUID(), [this.id], this.chunks.slice());
  }

  /** New id, this session's chunks then all of `other`'s (a shared prefix appears twice): O(n + m). */
  merge(other: NaiveSession): NaiveSession {
    return new NaiveSession(randomUUID(), [this.id, other.id], this.chunks.concat(other.chunks));
  }
}
