/**
 * A persistent vector: a 32-way trie of full 32-item leaves plus a tail of the last 1–32 items.
 *
 * Every version is immutable and shares structure with the version it was made from. `push` copies
 * the tail (at most 31 pointers) and, once every 32 pushes, one root-to-leaf path of the trie
 * (O(log₃₂ n) nodes); `at` walks one such path. No version ever writes into an array another
 * version can see, so a version that is dropped takes everything it alone created with it, and
 * any number of versions may push from the same one in any order (branching costs nothing extra).
 */
const BITS = 5;
const WIDTH = 1 << BITS;
const MASK = WIDTH - 1;

/** A trie node: its children (nodes, or at the lowest level leaves holding items). */
type Branch = readonly unknown[];

const NO_ITEMS: readonly never[] = Object.freeze([]);

export class PersistentVector<T> {
  static readonly EMPTY: PersistentVector<never> = new PersistentVector<never>(0, BITS, NO_ITEMS, NO_ITEMS);

  private constructor(
    /** Number of items. */
    readonly length: number,
    /** Bit shift of the root level: the root's children each cover `1 << shift` items. */
    private readonly shift: number,
    private readonly root: Branch,
    /** The last 1–32 items (none only when the vector is empty). Never written after creation. */
    private readonly tail: readonly T[],
  ) {}

  /** A vector holding `items` in order (the array is copied). O(n). */
  static from<T>(items: readonly T[]): PersistentVector<T> {
    return (PersistentVector.EMPTY as PersistentVector<T>).pushAll(items);
  }

  /** Index of the first item held in the tail rather than the trie; a multiple of 32. */
  get tailOffset(): number {
    return this.length - this.tail.length;
  }

  /** The item at `index` (0 ≤ index < length), else `undefined`. O(log₃₂ n). */
  at(index: number): T | undefined {
    if (!(index >= 0 && index < this.length)) return undefined;
    return this.leafFor(index)[index & MASK];
  }

  /**
   * The 32-item leaf (or the tail) holding `index`; its first item is at `index - (index & 31)`.
   * `index` must be in range.
   */
  leafFor(index: number): readonly T[] {
    if (index >= this.length - this.tail.length) return this.tail;
    let node: Branch = this.root;
    for (let level = this.shift; level > 0; level -= BITS) node = node[(index >>> level) & MASK] as Branch;
    return node as readonly T[];
  }

  /** A new vector with `item` after this one's items. */
  push(item: T): PersistentVector<T> {
    const tail = this.tail;
    const n = tail.length;
    if (n < WIDTH) {
      // An exactly sized copy: a leaf keeps the capacity of the tail it was promoted from.
      const next = new Array<T>(n + 1);
      for (let i = 0; i < n; i++) next[i] = tail[i]!;
      next[n] = item;
      return new PersistentVector(this.length + 1, this.shift, this.root, next);
    }
    const [root, shift] = promote(this.root, this.shift, this.length, tail);
    return new PersistentVector(this.length + 1, shift, root, [item]);
  }

  /** A new vector with `items` after this one's (the array is copied). O(k + k/32 · log₃₂ n). */
  pushAll(items: readonly T[]): PersistentVector<T> {
    const k = items.length;
    if (k === 0) return this;
    if (k === 1) return this.push(items[0]!);
    let { root, shift, length } = this;
    // The tail being filled is private to this call until the new vector is returned.
    let tail: T[] = this.tail.slice();
    for (let i = 0; i < k; i++) {
      if (tail.length === WIDTH) {
        [root, shift] = promote(root, shift, length, tail);
        tail = [];
      }
      tail.push(items[i]!);
      length++;
    }
    return new PersistentVector(length, shift, root, tail);
  }

  /** Calls `fn` with each item from `start` (inclusive) to `end` (exclusive), in order. */
  forEach(start: number, end: number, fn: (item: T, index: number) => void): void {
    let i = Math.max(0, start);
    const stop = Math.min(end, this.length);
    while (i < stop) {
      const leaf = this.leafFor(i);
      const base = i - (i & MASK);
      const leafStop = Math.min(stop - base, leaf.length);
      for (let j = i - base; j < leafStop; j++) fn(leaf[j]!, base + j);
      i = base + leafStop;
    }
  }

  /** An iterator over the items from `start` (0 ≤ start ≤ length) to the end. O(log₃₂ n) to start. */
  values(start = 0): IterableIterator<T> {
    return new VectorIterator(this, start);
  }

  /** A new array of the items from `start` (inclusive) to the end. */
  slice(start = 0): T[] {
    const out = new Array<T>(Math.max(0, this.length - start));
    this.forEach(start, this.length, (item, i) => {
      out[i - start] = item;
    });
    return out;
  }

  /**
   * How many leading items `a` and `b` share. Trie nodes the two hold in common (one version was
   * made from the other, or both from a common one) are skipped without looking at their items:
   * O(log₃₂ n) for that part. From where the common structure ends, items are compared with
   * `same` (default `===`) one by one, which for vectors built independently (restored from JSON)
   * costs O(prefix).
   */
  static sharedPrefix<T>(
    a: PersistentVector<T>,
    b: PersistentVector<T>,
    same: (x: T, y: T) => boolean = (x, y) => x === y,
  ): number {
    if (a === b) return a.length;
    let p = sharedTriePrefix(a, b);
    const limit = Math.min(a.length, b.length);
    if (p >= limit) return limit;
    let leafA = a.leafFor(p);
    let leafB = b.leafFor(p);
    while (p < limit) {
      const j = p & MASK;
      if (j === 0) {
        leafA = a.leafFor(p);
        leafB = b.leafFor(p);
        if (leafA === leafB) {
          // Same leaf or the same tail array: shared whole (items past either end do not exist).
          p = Math.min(p + leafA.length, limit);
          continue;
        }
      }
      const x = leafA[j]!;
      const y = leafB[j]!;
      if (x !== y && !same(x, y)) break;
      p++;
    }
    return p;
  }
}

/** Leading items held in trie nodes both vectors share (the tails are not looked at). */
function sharedTriePrefix<T>(a: PersistentVector<T>, b: PersistentVector<T>): number {
  const limit = Math.min(a.tailOffset, b.tailOffset);
  if (limit === 0) return 0;
  const ia = a as unknown as { root: Branch; shift: number };
  const ib = b as unknown as { root: Branch; shift: number };
  let na: Branch | undefined = ia.root;
  let nb: Branch | undefined = ib.root;
  let sa = ia.shift;
  let sb = ib.shift;
  // A taller trie holds the shorter one's shape as its leftmost subtree (the old root is kept as
  // child 0 whenever the trie grows a level), so level them before comparing.
  while (sa > sb) {
    na = na[0] as Branch;
    sa -= BITS;
  }
  while (sb > sa) {
    nb = nb[0] as Branch;
    sb -= BITS;
  }
  let offset = 0;
  let level = sa;
  for (;;) {
    if (na === nb) return Math.min(limit, offset + (WIDTH << level));
    if (na === undefined || nb === undefined) return Math.min(offset, limit);
    let i = 0;
    while (i < WIDTH && na[i] !== undefined && na[i] === nb[i]) i++;
    if (level === 0) return Math.min(offset + i, limit);
    offset += i << level;
    if (offset >= limit || i === WIDTH) return Math.min(offset, limit);
    na = na[i] as Branch | undefined;
    nb = nb[i] as Branch | undefined;
    level -= BITS;
  }
}

/** Puts the full `tail` of a vector of `count` items into the trie; returns the new root and shift. */
function promote(root: Branch, shift: number, count: number, tail: readonly unknown[]): [Branch, number] {
  // Root overflow: the trie is full at this height, so the old root becomes child 0 of a new one.
  if (count >>> BITS > 1 << shift) return [[root, newPath(shift, tail)], shift + BITS];
  return [pushTail(count, shift, root, tail), shift];
}

function pushTail(count: number, level: number, parent: Branch, leaf: readonly unknown[]): Branch {
  const index = ((count - 1) >>> level) & MASK;
  const copy = parent.slice();
  if (level === BITS) {
    copy[index] = leaf;
  } else {
    const child = parent[index] as Branch | undefined;
    copy[index] = child ? pushTail(count, level - BITS, child, leaf) : newPath(level - BITS, leaf);
  }
  return copy;
}

function newPath(level: number, leaf: readonly unknown[]): Branch {
  return level === 0 ? leaf : [newPath(level - BITS, leaf)];
}

class VectorIterator<T> implements IterableIterator<T> {
  private leaf: readonly T[] = NO_ITEMS;
  private index: number;

  constructor(
    private readonly vector: PersistentVector<T>,
    start: number,
  ) {
    this.index = start;
    if (start > 0 && start < vector.length) this.leaf = vector.leafFor(start);
  }

  next(): IteratorResult<T> {
    const i = this.index;
    if (i >= this.vector.length) return { done: true, value: undefined };
    const j = i & MASK;
    if (j === 0) this.leaf = this.vector.leafFor(i);
    this.index = i + 1;
    return { done: false, value: this.leaf[j]! };
  }

  [Symbol.iterator](): IterableIterator<T> {
    return this;
  }
}
