/**
 * Postings as snapshots keep them: per term, the entries holding it (as increasing entry numbers)
 * and how often, packed into one byte string of variable-length numbers. Each entry is the number
 * `2 × (number − previous number) + (tf > 1)`, followed by `tf` when it is above 1 (the first
 * previous number is −1). A term's bytes are decoded the first time a query uses it.
 */

/** Writes postings in the packed form. */
export class PostingWriter {
  private bytes = new Uint8Array(1 << 16);
  private length = 0;

  /** Appends one term's posting (entry numbers increasing); returns its size in bytes. */
  add(docs: ArrayLike<number>, tfs: ArrayLike<number>, count: number): number {
    const start = this.length;
    let previous = -1;
    for (let k = 0; k < count; k++) {
      const doc = docs[k]!;
      const tf = tfs[k]!;
      this.number((doc - previous) * 2 + (tf > 1 ? 1 : 0));
      if (tf > 1) this.number(tf);
      previous = doc;
    }
    return this.length - start;
  }

  /** Appends a posting packed already (`bytes[start, end)`, from a snapshot); returns its size in bytes. */
  copy(bytes: Uint8Array, start: number, end: number): number {
    this.reserve(end - start);
    this.bytes.set(bytes.subarray(start, end), this.length);
    this.length += end - start;
    return end - start;
  }

  /** The bytes written. */
  finish(): Uint8Array {
    return this.bytes.subarray(0, this.length);
  }

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + bytes));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
  }

  private number(value: number): void {
    this.reserve(8);
    let rest = value;
    while (rest >= 0x80) {
      this.bytes[this.length++] = (rest % 128) | 0x80;
      rest = Math.floor(rest / 128);
    }
    this.bytes[this.length++] = rest;
  }
}

/**
 * Decodes `count` entries of one term's posting from `bytes[start, end)` into `docs` and `tfs`.
 *
 * @throws {Error} when the bytes do not hold exactly `count` entries below `docLimit`, increasing.
 */
export function readPosting(
  bytes: Uint8Array,
  start: number,
  end: number,
  count: number,
  docLimit: number,
  docs: Int32Array,
  tfs: Uint32Array,
): void {
  let offset = start;
  let doc = -1;
  const next = (): number => {
    let value = 0;
    let scale = 1;
    let byte: number;
    do {
      if (offset >= end) throw new Error("a posting is truncated");
      byte = bytes[offset++]!;
      value += (byte & 0x7f) * scale;
      scale *= 128;
    } while (byte >= 0x80);
    return value;
  };
  for (let k = 0; k < count; k++) {
    const value = next();
    const delta = Math.floor(value / 2);
    if (delta < 1) throw new Error("a posting's entries are not increasing");
    doc += delta;
    if (doc >= docLimit) throw new Error("a posting names an entry that does not exist");
    docs[k] = doc;
    tfs[k] = value % 2 === 1 ? next() : 1;
  }
  if (offset !== end) throw new Error("a posting has trailing bytes");
}

/**
 * The terms and postings of a loaded snapshot: the terms sorted (term `i` has id `i`, found by
 * binary search, so opening builds no map) and their postings packed, decoded one at a time.
 */
export class LoadedPostings {
  private constructor(
    readonly terms: readonly string[],
    private readonly bytes: Uint8Array,
    private readonly starts: Float64Array,
    private readonly counts: Uint32Array,
    /** Number of entries: every entry number in a posting is below it. */
    private readonly docLimit: number,
  ) {}

  /**
   * The postings of `terms` (sorted, distinct), `counts[i]` entries in `sizes[i]` bytes each, one
   * after the other in `bytes`, naming entries below `docLimit`.
   *
   * @throws {Error} when the terms are not sorted or the counts and sizes do not fit the bytes.
   */
  static of(
    terms: readonly string[],
    counts: Uint32Array,
    sizes: Uint32Array,
    bytes: Uint8Array,
    docLimit: number,
  ): LoadedPostings {
    if (counts.length !== terms.length || sizes.length !== terms.length) {
      throw new Error("the posting counts or sizes do not match the terms");
    }
    for (let t = 1; t < terms.length; t++) {
      if (!(terms[t - 1]! < terms[t]!)) throw new Error("the terms are not sorted and distinct");
    }
    const starts = new Float64Array(terms.length + 1);
    for (let t = 0; t < terms.length; t++) {
      const size = sizes[t]!;
      const count = counts[t]!;
      if (size < 1 || count < 1 || count > docLimit) {
        throw new Error(`the posting of term ${JSON.stringify(terms[t])} has an invalid size`);
      }
      starts[t + 1] = starts[t]! + size;
    }
    if (starts[terms.length] !== bytes.length) throw new Error("the postings do not add up to their bytes");
    return new LoadedPostings(terms, bytes, starts, counts, docLimit);
  }

  /** Number of entries the postings may name. */
  get entries(): number {
    return this.docLimit;
  }

  /** The id of `term`, if the snapshot has it. */
  find(term: string): number | undefined {
    const sorted = this.terms;
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (sorted[mid]! < term) lo = mid + 1;
      else hi = mid;
    }
    return lo < sorted.length && sorted[lo] === term ? lo : undefined;
  }

  /** Number of entries holding term `id`. */
  count(id: number): number {
    return this.counts[id]!;
  }

  /** Size in bytes of term `id`'s posting. */
  size(id: number): number {
    return this.starts[id + 1]! - this.starts[id]!;
  }

  /** Term `id`'s posting decoded into `docs` and `tfs` (each of {@link count} entries). @throws {Error} */
  decode(id: number, docs: Int32Array, tfs: Uint32Array): void {
    readPosting(
      this.bytes,
      this.starts[id]!,
      this.starts[id + 1]!,
      this.counts[id]!,
      this.docLimit,
      docs,
      tfs,
    );
  }

  /** Appends the postings of terms `from` to `to` (inclusive), as they are, to `out`. */
  copyTo(out: PostingWriter, from: number, to: number): void {
    out.copy(this.bytes, this.starts[from]!, this.starts[to + 1]!);
  }
}
