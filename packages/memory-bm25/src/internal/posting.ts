/**
 * One term's posting list: the entries holding the term, as increasing entry numbers, with the
 * term frequency in each. Entries are numbered in insertion order, so adding an entry appends;
 * removing one closes the gap. It also keeps what scoring needs for an upper bound on the term's
 * score: the largest term frequency and the shortest entry length among its entries (a removal
 * leaves them as they were, which is still a valid bound).
 */
export class Posting {
  docs: Int32Array;
  tfs: Uint32Array;
  size: number;
  maxTf = 0;
  minLength = Number.POSITIVE_INFINITY;

  constructor(capacity = 4) {
    this.docs = new Int32Array(capacity);
    this.tfs = new Uint32Array(capacity);
    this.size = 0;
  }

  /** A posting over decoded arrays of `size` entries (the arrays are kept). */
  static of(docs: Int32Array, tfs: Uint32Array, size: number, lengths: Float64Array): Posting {
    const posting = new Posting(0);
    posting.docs = docs;
    posting.tfs = tfs;
    posting.size = size;
    for (let k = 0; k < size; k++) {
      if (tfs[k]! > posting.maxTf) posting.maxTf = tfs[k]!;
      const length = lengths[docs[k]!]!;
      if (length < posting.minLength) posting.minLength = length;
    }
    return posting;
  }

  /** Adds `tf` occurrences for entry `doc`, which must be at or after the last entry. */
  add(doc: number, tf: number, length: number): void {
    const last = this.size - 1;
    if (last >= 0 && this.docs[last] === doc) {
      this.tfs[last]! += tf;
      if (this.tfs[last]! > this.maxTf) this.maxTf = this.tfs[last]!;
      return;
    }
    if (this.size === this.docs.length) {
      const capacity = Math.max(4, this.docs.length * 2);
      const docs = new Int32Array(capacity);
      docs.set(this.docs);
      const tfs = new Uint32Array(capacity);
      tfs.set(this.tfs);
      this.docs = docs;
      this.tfs = tfs;
    }
    this.docs[this.size] = doc;
    this.tfs[this.size] = tf;
    this.size++;
    if (tf > this.maxTf) this.maxTf = tf;
    if (length < this.minLength) this.minLength = length;
  }

  /** Removes entry `doc`; false when it is not in the posting. */
  remove(doc: number): boolean {
    const at = this.find(doc, 0);
    if (at >= this.size || this.docs[at] !== doc) return false;
    this.docs.copyWithin(at, at + 1, this.size);
    this.tfs.copyWithin(at, at + 1, this.size);
    this.size--;
    return true;
  }

  /** The first position at or after `from` whose entry is >= `doc` (galloping, then binary search). */
  find(doc: number, from: number): number {
    const docs = this.docs;
    const size = this.size;
    if (from >= size || docs[from]! >= doc) return from;
    let step = 1;
    let low = from;
    let high = from + 1;
    while (high < size && docs[high]! < doc) {
      low = high;
      step *= 2;
      high = from + step;
    }
    if (high > size) high = size;
    // docs[low] < doc; the answer is in (low, high].
    let lo = low + 1;
    let hi = high;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (docs[mid]! < doc) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
