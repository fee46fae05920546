/**
 * A persistent sorted map from chunk ids to positions: a B+ tree of fanout 32 ordered by id.
 *
 * Chunk ids are UUID v7, which sort by creation time, so the ids a session appends arrive in
 * increasing order and land in the rightmost leaf: a batch of 32 copies one root-to-leaf path and
 * fills it in place. Ids that arrive out of order (chunks taken in by a merge, sessions restored
 * from elsewhere) cost one path copy each. Lookups are O(log₃₂ n) nodes, each a binary search.
 *
 * Within one {@link IdIndex.withIds} batch, nodes the batch itself created are updated in place
 * (no other version can see them yet). Only "insert if absent" is offered: an id keeps the first
 * position it was recorded at.
 */
const MAX = 32;

class Leaf {
  constructor(
    public keys: string[],
    public values: number[],
    public batch: number,
  ) {}
}

class Inner {
  constructor(
    /** The smallest key under each child. */
    public keys: string[],
    public children: Node[],
    public batch: number,
  ) {}
}

type Node = Leaf | Inner;

let lastBatch = 0;

/** First index in sorted `keys` whose key is not below `key`. */
function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The child of `node` whose range holds `key`: the last one whose smallest key is ≤ `key`. */
function childFor(node: Inner, key: string): number {
  const last = node.keys.length - 1;
  // Ids in creation order go right; one comparison instead of a search.
  if (key >= node.keys[last]!) return last;
  const i = lowerBound(node.keys, key);
  return i < node.keys.length && node.keys[i] === key ? i : Math.max(0, i - 1);
}

export class IdIndex {
  static readonly EMPTY: IdIndex = new IdIndex(new Leaf([], [], 0), 0);

  private constructor(
    private readonly root: Node,
    /** Number of distinct ids held. */
    readonly size: number,
  ) {}

  /** The position recorded for `key`, or `undefined`. */
  get(key: string): number | undefined {
    let node = this.root;
    while (node instanceof Inner) node = node.children[childFor(node, key)]!;
    const i = lowerBound(node.keys, key);
    return node.keys[i] === key ? node.values[i] : undefined;
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
      const result = insert(root, items[i]!.id, firstPosition + i, batch);
      if (result === undefined) continue;
      size++;
      root =
        result.length === 1 ? result[0] : new Inner([minKey(result[0]), minKey(result[1])], result, batch);
    }
    return new IdIndex(root, size);
  }
}

function minKey(node: Node): string {
  return node.keys[0]!;
}

/**
 * Inserts `key` under `node`: `undefined` if it is already there, else the node that replaces
 * `node`, or two when it split.
 */
function insert(node: Node, key: string, value: number, batch: number): [Node] | [Node, Node] | undefined {
  if (node instanceof Leaf) {
    const n = node.keys.length;
    const at = n === 0 || key > node.keys[n - 1]! ? n : lowerBound(node.keys, key);
    if (node.keys[at] === key) return undefined;
    const leaf = node.batch === batch ? node : new Leaf(node.keys.slice(), node.values.slice(), batch);
    if (at === n) {
      leaf.keys.push(key);
      leaf.values.push(value);
    } else {
      leaf.keys.splice(at, 0, key);
      leaf.values.splice(at, 0, value);
    }
    if (leaf.keys.length <= MAX) return [leaf];
    const cut = splitPoint(at, leaf.keys.length);
    return [
      new Leaf(leaf.keys.slice(0, cut), leaf.values.slice(0, cut), batch),
      new Leaf(leaf.keys.slice(cut), leaf.values.slice(cut), batch),
    ];
  }
  const i = childFor(node, key);
  const result = insert(node.children[i]!, key, value, batch);
  if (result === undefined) return undefined;
  const inner = node.batch === batch ? node : new Inner(node.keys.slice(), node.children.slice(), batch);
  if (result.length === 1) {
    inner.children[i] = result[0];
    inner.keys[i] = minKey(result[0]);
    return [inner];
  }
  inner.children.splice(i, 1, result[0], result[1]);
  inner.keys.splice(i, 1, minKey(result[0]), minKey(result[1]));
  if (inner.children.length <= MAX) return [inner];
  const cut = splitPoint(i + 1, inner.children.length);
  return [
    new Inner(inner.keys.slice(0, cut), inner.children.slice(0, cut), batch),
    new Inner(inner.keys.slice(cut), inner.children.slice(cut), batch),
  ];
}

/**
 * Where an overfull node of `length` entries splits after an insert at `at`: an insert at the
 * right end (ids in creation order) leaves the left node full, anything else splits in half.
 */
function splitPoint(at: number, length: number): number {
  return at >= length - 1 ? MAX : length >>> 1;
}
