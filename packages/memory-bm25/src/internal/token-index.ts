/**
 * The token index of the `text` property: for every token, the entries holding it and how often.
 * It stands in for Orama's radix tree, which this store never needs (query tokens match whole
 * tokens, never prefixes): Orama calls `insert` for every token of an entry (repeats included)
 * and `removeDocumentByWord` when the entry is removed; the store's own search reads `posting`.
 *
 * A store loaded from a snapshot keeps the postings packed (see {@link packPostings}) and unpacks
 * a token's posting the first time it is used, so opening a large store does not build them all.
 */
export class TokenIndex {
  /** Unpacked postings: token → (internal id → term frequency), in insertion order. */
  private readonly postings = new Map<string, Map<number, number>>();
  /** Packed postings: token → its position in `packed`. */
  private readonly packedAt = new Map<string, number>();
  private packed: PackedPostings | undefined;

  /** Adds one occurrence of `token` in entry `docId`. */
  insert(token: string, docId: number): void {
    let posting = this.posting(token);
    if (posting === undefined) {
      posting = new Map();
      this.postings.set(token, posting);
    }
    posting.set(docId, (posting.get(docId) ?? 0) + 1);
  }

  /** Removes entry `docId` from the posting of `token` (a no-op for repeats). */
  removeDocumentByWord(token: string, docId: number): boolean {
    const posting = this.posting(token);
    if (posting?.delete(docId) && posting.size === 0) this.postings.delete(token);
    return true;
  }

  /** The entries holding `token` with its term frequency in each, in insertion order. */
  posting(token: string): Map<number, number> | undefined {
    const posting = this.postings.get(token);
    if (posting !== undefined || this.packed === undefined) return posting;
    const at = this.packedAt.get(token);
    if (at === undefined) return undefined;
    this.packedAt.delete(token);
    const unpacked = new Map<number, number>();
    readPosting(this.packed, at, (docId, tf) => {
      unpacked.set(docId, tf);
    });
    this.postings.set(token, unpacked);
    return unpacked;
  }

  /** Every token with its posting (as id and term frequency lists), without unpacking any. */
  forEach(fn: (token: string, docIds: number[], tfs: number[]) => void): void {
    for (const [token, posting] of this.postings) fn(token, [...posting.keys()], [...posting.values()]);
    if (this.packed === undefined) return;
    for (const [token, at] of this.packedAt) {
      const docIds: number[] = [];
      const tfs: number[] = [];
      readPosting(this.packed, at, (docId, tf) => {
        docIds.push(docId);
        tfs.push(tf);
      });
      fn(token, docIds, tfs);
    }
  }

  /**
   * Replaces the content of this (empty) index with packed postings of entries 1…`docCount`, and
   * returns each entry's length in tokens (index 0 unused). The postings are checked on the way.
   *
   * @throws {Error} when they are inconsistent.
   */
  load(
    tokens: readonly string[],
    counts: readonly number[],
    bytes: Uint8Array,
    docCount: number,
  ): Float64Array {
    if (counts.length !== tokens.length)
      throw new Error(`${counts.length} posting sizes for ${tokens.length} tokens`);
    const lengths = new Float64Array(docCount + 1);
    const starts = new Uint32Array(tokens.length);
    const packed: PackedPostings = { bytes, starts, counts };
    // seenIn[id] = 1 + the last token whose posting named entry `id`: finds an entry named twice.
    const seenIn = new Uint32Array(docCount + 1);
    let offset = 0;
    for (let t = 0; t < tokens.length; t++) {
      const token = tokens[t]!;
      const count = counts[t]!;
      if (typeof token !== "string" || this.packedAt.has(token)) {
        throw new Error(`the token ${JSON.stringify(token)} is invalid or repeated`);
      }
      if (!Number.isInteger(count) || count < 1)
        throw new Error(`the token ${JSON.stringify(token)} has no entries`);
      starts[t] = offset;
      offset = readPosting(packed, t, (docId, tf) => {
        if (!(docId >= 1 && docId <= docCount) || seenIn[docId] === t + 1) {
          throw new Error(`the posting of token ${JSON.stringify(token)} names an invalid entry`);
        }
        seenIn[docId] = t + 1;
        lengths[docId]! += tf;
      });
      this.packedAt.set(token, t);
    }
    if (offset !== bytes.length) throw new Error("the postings have trailing bytes");
    this.packed = packed;
    return lengths;
  }
}

/** Postings as snapshots keep them: one byte string, the start and entry count of each token. */
interface PackedPostings {
  readonly bytes: Uint8Array;
  readonly starts: Uint32Array;
  readonly counts: readonly number[];
}

/**
 * Reads the posting of token `t`, calling `fn` for each entry in order; returns the offset after it.
 * A posting is, per entry, the variable-length number `2 × zigzag(id − previous id) + (tf > 1)`,
 * followed by `tf` as another such number when `tf > 1` (the first previous id is 0).
 */
function readPosting(packed: PackedPostings, t: number, fn: (docId: number, tf: number) => void): number {
  const { bytes } = packed;
  let offset = packed.starts[t]!;
  let docId = 0;
  for (let k = packed.counts[t]!; k > 0; k--) {
    let value = 0;
    let scale = 1;
    let byte: number;
    do {
      if (offset >= bytes.length) throw new Error("the postings are truncated");
      byte = bytes[offset++]!;
      value += (byte & 0x7f) * scale;
      scale *= 128;
    } while (byte >= 0x80);
    const repeated = value % 2 === 1;
    const zigzag = (value - (repeated ? 1 : 0)) / 2;
    docId += zigzag % 2 === 0 ? zigzag / 2 : -(zigzag + 1) / 2;
    let tf = 1;
    if (repeated) {
      tf = 0;
      scale = 1;
      do {
        if (offset >= bytes.length) throw new Error("the postings are truncated");
        byte = bytes[offset++]!;
        tf += (byte & 0x7f) * scale;
        scale *= 128;
      } while (byte >= 0x80);
    }
    fn(docId, tf);
  }
  return offset;
}

/** Writes postings in the packed form of {@link readPosting}. */
export class PostingWriter {
  private bytes = new Uint8Array(1 << 16);
  private length = 0;

  /** Appends one token's posting: entry ids (in order) and their term frequencies. */
  add(docIds: readonly number[], tfs: readonly number[]): void {
    let previous = 0;
    for (let k = 0; k < docIds.length; k++) {
      const delta = docIds[k]! - previous;
      previous = docIds[k]!;
      const zigzag = delta >= 0 ? delta * 2 : -delta * 2 - 1;
      const tf = tfs[k]!;
      this.number(zigzag * 2 + (tf > 1 ? 1 : 0));
      if (tf > 1) this.number(tf);
    }
  }

  /** The bytes written. */
  finish(): Uint8Array {
    return this.bytes.subarray(0, this.length);
  }

  private number(value: number): void {
    if (this.length + 8 > this.bytes.length) {
      const grown = new Uint8Array(this.bytes.length * 2);
      grown.set(this.bytes);
      this.bytes = grown;
    }
    let rest = value;
    while (rest >= 0x80) {
      this.bytes[this.length++] = (rest % 128) | 0x80;
      rest = Math.floor(rest / 128);
    }
    this.bytes[this.length++] = rest;
  }
}
