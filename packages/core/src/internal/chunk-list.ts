/**
 * A persistent, append-only sequence with shared prefixes.
 *
 * Each list is a view `buf[0..end)` on an append-only buffer, preceded by an optional `prev` list.
 * Appending to a view that ends where its buffer ends pushes in place (O(1) amortized), and every
 * older view still sees only its own `end`. Appending to a view whose buffer has already grown past
 * it (a sibling fork appended first) starts a new segment after it, so k forks of an n-item list
 * that each add m items hold O(n + k·m). Chains deeper than {@link MAX_DEPTH} are flattened once,
 * which keeps indexing and iteration at O(depth) overhead with depth bounded.
 */
const MAX_DEPTH = 32;

export class ChunkList<T> {
  static readonly EMPTY: ChunkList<never> = new ChunkList<never>(undefined, [], 0);

  readonly length: number;
  private readonly depth: number;
  private flat: readonly T[] | undefined;

  private constructor(
    private readonly prev: ChunkList<T> | undefined,
    private readonly buf: T[],
    private readonly end: number,
  ) {
    this.length = (prev?.length ?? 0) + end;
    this.depth = (prev?.depth ?? 0) + 1;
  }

  static from<T>(items: readonly T[]): ChunkList<T> {
    return items.length === 0
      ? (ChunkList.EMPTY as ChunkList<T>)
      : new ChunkList<T>(undefined, items.slice(), items.length);
  }

  /** A new list with `items` after this one's. */
  push(...items: T[]): ChunkList<T> {
    return this.concat(items);
  }

  concat(items: readonly T[]): ChunkList<T> {
    if (items.length === 0) return this;
    if (this.end > 0 && this.buf.length === this.end) {
      for (const item of items) this.buf.push(item);
      return new ChunkList(this.prev, this.buf, this.end + items.length);
    }
    if (this.end === 0 && this.prev === undefined)
      return new ChunkList<T>(undefined, items.slice(), items.length);
    if (this.depth >= MAX_DEPTH) {
      const all = this.toArray().slice();
      for (const item of items) all.push(item);
      return new ChunkList<T>(undefined, all, all.length);
    }
    return new ChunkList<T>(this, items.slice(), items.length);
  }

  /** The item at `index` (0-based, negative counts from the end), or `undefined`. */
  at(index: number): T | undefined {
    if (index < 0) index += this.length;
    if (index < 0 || index >= this.length) return undefined;
    if (this.flat) return this.flat[index];
    let node: ChunkList<T> = this;
    let start = this.length - this.end;
    while (index < start) {
      node = node.prev!;
      start -= node.end;
    }
    return node.buf[index - start];
  }

  /** A frozen array of all items, built once per list and shared by every holder of this list. */
  toArray(): readonly T[] {
    if (this.flat) return this.flat;
    if (this.prev === undefined && this.buf.length === this.end) {
      // The buffer may still grow through a sibling's in-place push, so copy rather than expose it.
      this.flat = Object.freeze(this.buf.slice(0, this.end));
      return this.flat;
    }
    const out = new Array<T>(this.length);
    let node: ChunkList<T> | undefined = this;
    let stop = this.length;
    while (node) {
      const start = stop - node.end;
      for (let i = 0; i < node.end; i++) out[start + i] = node.buf[i]!;
      stop = start;
      node = node.prev;
    }
    this.flat = Object.freeze(out);
    return this.flat;
  }

  /**
   * How many leading items this list and `other` share: first through shared buffers (no item
   * compared), then item by item with `same` from where the shared structure ends.
   */
  commonPrefix(other: ChunkList<T>, same: (a: T, b: T) => boolean): number {
    const a = this.segments();
    const b = other.segments();
    let shared = 0;
    for (let i = 0; i < a.length && i < b.length; i++) {
      const x = a[i]!;
      const y = b[i]!;
      if (x.buf !== y.buf) break;
      shared += Math.min(x.end, y.end);
      if (x.end !== y.end) break;
    }
    const limit = Math.min(this.length, other.length);
    while (shared < limit && same(this.at(shared)!, other.at(shared)!)) shared++;
    return shared;
  }

  /** Items from `start` (inclusive) to the end. */
  slice(start: number): T[] {
    const out: T[] = [];
    for (let i = start; i < this.length; i++) out.push(this.at(i)!);
    return out;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    yield* this.toArray();
  }

  private segments(): ChunkList<T>[] {
    const out: ChunkList<T>[] = [];
    for (let node: ChunkList<T> | undefined = this; node; node = node.prev) out.push(node);
    return out.reverse();
  }
}
