/**
 * A persistent map from string ids to positions: a hash array mapped trie (32-way, 5 hash bits a
 * level, collision lists past 32 bits). Lookups are O(log₃₂ n). Inserts copy one path, except
 * within one {@link IdIndex.withIds} batch, where nodes the batch itself created are updated in
 * place (no other version can see them yet), so a batch of 32 ids copies each shared node once.
 *
 * Only "insert if absent" is offered: an id keeps the first position it was recorded at.
 */
const BITS = 5;
const MASK = 31;
/** Past this shift the 32-bit hash has no bits left; equal hashes then share a collision list. */
const MAX_SHIFT = 30;

/** Slots hold `[key, value]` pairs; a pair whose key is `undefined` holds a child node as its value. */
class BitmapNode {
  constructor(
    public bitmap: number,
    public slots: unknown[],
    public batch: number,
  ) {}
}

class CollisionNode {
  constructor(
    readonly hash: number,
    public keys: string[],
    public values: number[],
    public batch: number,
  ) {}
}

type TrieNode = BitmapNode | CollisionNode;

let lastBatch = 0;
/** Set by `insert` when it added a key (module-level to avoid allocating a result per insert). */
let added = false;

/** FNV-1a over UTF-16 code units, finished with murmur3's avalanche so every bit depends on all. */
export function hashOf(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

export class IdIndex {
  static readonly EMPTY: IdIndex = new IdIndex(new BitmapNode(0, [], 0), 0);

  private constructor(
    private readonly root: BitmapNode,
    /** Number of distinct ids held. */
    readonly size: number,
  ) {}

  /** The position recorded for `key`, or `undefined`. */
  get(key: string): number | undefined {
    const h = hashOf(key);
    let node: TrieNode = this.root;
    let shift = 0;
    for (;;) {
      if (node instanceof CollisionNode) {
        const i = node.keys.indexOf(key);
        return i < 0 ? undefined : node.values[i];
      }
      const bit = 1 << ((h >>> shift) & MASK);
      if ((node.bitmap & bit) === 0) return undefined;
      const at = 2 * popcount(node.bitmap & (bit - 1));
      const k = node.slots[at];
      if (k === undefined) {
        node = node.slots[at + 1] as TrieNode;
        shift += BITS;
        continue;
      }
      return k === key ? (node.slots[at + 1] as number) : undefined;
    }
  }

  /**
   * A new index that also maps `items[i].id` to `firstPosition + i`, for each id not already held
   * (earlier positions win, also within the batch).
   */
  withIds(items: readonly { readonly id: string }[], firstPosition: number): IdIndex {
    if (items.length === 0) return this;
    const batch = ++lastBatch;
    let root = this.root;
    let size = this.size;
    for (let i = 0; i < items.length; i++) {
      const key = items[i]!.id;
      added = false;
      root = insert(root, 0, hashOf(key), key, firstPosition + i, batch) as BitmapNode;
      if (added) size++;
    }
    return new IdIndex(root, size);
  }
}

function insert(
  node: BitmapNode,
  shift: number,
  h: number,
  key: string,
  value: number,
  batch: number,
): TrieNode {
  const bit = 1 << ((h >>> shift) & MASK);
  const at = 2 * popcount(node.bitmap & (bit - 1));
  if ((node.bitmap & bit) === 0) {
    added = true;
    if (node.batch === batch) {
      node.slots.splice(at, 0, key, value);
      node.bitmap |= bit;
      return node;
    }
    const slots = node.slots.slice(0, at);
    slots.push(key, value);
    for (let i = at; i < node.slots.length; i++) slots.push(node.slots[i]);
    return new BitmapNode(node.bitmap | bit, slots, batch);
  }
  const k = node.slots[at] as string | undefined;
  const v = node.slots[at + 1];
  let replacement: TrieNode;
  if (k === undefined) {
    const child = v as TrieNode;
    const next =
      child instanceof CollisionNode
        ? insertCollision(child, key, value, batch)
        : insert(child, shift + BITS, h, key, value, batch);
    if (next === child) return node;
    replacement = next;
  } else {
    if (k === key) return node;
    added = true;
    replacement = pair(shift + BITS, hashOf(k), k, v as number, h, key, value, batch);
  }
  const target = node.batch === batch ? node : new BitmapNode(node.bitmap, node.slots.slice(), batch);
  target.slots[at] = undefined;
  target.slots[at + 1] = replacement;
  return target;
}

function insertCollision(node: CollisionNode, key: string, value: number, batch: number): CollisionNode {
  if (node.keys.includes(key)) return node;
  added = true;
  if (node.batch === batch) {
    node.keys.push(key);
    node.values.push(value);
    return node;
  }
  return new CollisionNode(node.hash, [...node.keys, key], [...node.values, value], batch);
}

/** A node holding two different keys whose hashes agree up to `shift`. */
function pair(
  shift: number,
  h1: number,
  k1: string,
  v1: number,
  h2: number,
  k2: string,
  v2: number,
  batch: number,
): TrieNode {
  if (shift > MAX_SHIFT) return new CollisionNode(h1, [k1, k2], [v1, v2], batch);
  const i1 = (h1 >>> shift) & MASK;
  const i2 = (h2 >>> shift) & MASK;
  if (i1 === i2) {
    return new BitmapNode(1 << i1, [undefined, pair(shift + BITS, h1, k1, v1, h2, k2, v2, batch)], batch);
  }
  return new BitmapNode((1 << i1) | (1 << i2), i1 < i2 ? [k1, v1, k2, v2] : [k2, v2, k1, v1], batch);
}
