import { MemoryError } from "@openrath/core";
import { PostingWriter, readPosting } from "./packed-postings.js";
import { Posting } from "./posting.js";
import type { AnalyzedText } from "./tokenize.js";
import { type QueryGroup, type Relevance, type Scored, topK } from "./top-k.js";
import { Vocabulary } from "./vocabulary.js";

/** An entry as the index holds it, with its scope as a path (`tenant/user/agent/session`). */
export interface StoredDoc {
  readonly id: string;
  readonly text: string;
  readonly scope: string;
  readonly createdAt: number;
  readonly metadata?: Record<string, unknown>;
  readonly source?: string;
}

/** The index as snapshots hold it (format version 3). */
export interface CompactIndex {
  /** The entries; entry `i` is number `i` in the postings. */
  readonly docs: readonly StoredDoc[];
  /** Each entry's length for BM25 (in the unit the analyzer counts). */
  readonly lengths: readonly number[];
  /** Every term with entries, sorted. */
  readonly terms: readonly string[];
  /** Per term, how many entries hold it. */
  readonly counts: readonly number[];
  /** Per term, the size in bytes of its packed posting. */
  readonly sizes: readonly number[];
  /** The packed postings of the terms, in order, base64 (see `packed-postings.ts`). */
  readonly postings: string;
}

/** The key of an entry: ids are unique within a scope. */
export function docKey(scope: string, id: string): string {
  return `${scope}\u0000${id}`;
}

interface Packed {
  readonly bytes: Uint8Array;
  readonly starts: Float64Array;
  readonly counts: readonly number[];
  readonly docLimit: number;
}

/**
 * The full-text index of a store: entries by number, their scopes and lengths, and per term a
 * posting list. Terms loaded from a snapshot keep their postings packed until a query uses them.
 */
export class TextIndex {
  readonly vocabulary: Vocabulary;
  /** Ids of the terms added since the snapshot; the snapshot's own are found in {@link packedTerms}. */
  private readonly termIds = new Map<string, number>();
  /** The snapshot's terms, sorted: term `i` has id `i` (binary search, so opening builds no map). */
  private packedTerms: readonly string[] = [];
  private terms: string[] = [];
  private postings: (Posting | undefined)[] = [];
  private packed: Packed | undefined;

  private docs: (StoredDoc | undefined)[] = [];
  private lengths = new Float64Array(1024);
  private scopeOf = new Int32Array(1024);
  /** Entry numbers by key, built on first use (a reopened store answers queries without it). */
  private keyMap: Map<string, number> | undefined = new Map();
  private readonly scopeIds = new Map<string, number>();
  /** Per scope id, the numbers of its entries, increasing (tfs unused). */
  private readonly scopeDocs: Posting[] = [];
  private live = 0;
  private totalLength = 0;

  constructor(vocabulary: Vocabulary = new Vocabulary()) {
    this.vocabulary = vocabulary;
  }

  /** Number of entries. */
  get size(): number {
    return this.live;
  }

  /** The entry stored under `key` ({@link docKey}), if any. */
  get(key: string): StoredDoc | undefined {
    const n = this.keys().get(key);
    return n === undefined ? undefined : this.docs[n];
  }

  /** The entry numbered `n`, if it is live. */
  doc(n: number): StoredDoc | undefined {
    return this.docs[n];
  }

  /** The entries in insertion order. */
  *all(): Generator<StoredDoc> {
    for (const doc of this.docs) if (doc !== undefined) yield doc;
  }

  /** Number of entries whose scope path is one of `paths`. */
  countIn(paths: readonly string[]): number {
    let total = 0;
    for (const path of paths) {
      const id = this.scopeIds.get(path);
      if (id !== undefined) total += this.scopeDocs[id]!.size;
    }
    return total;
  }

  /** Whether `term` has entries. */
  has(term: string): boolean {
    const id = this.termId(term);
    return id !== undefined && this.dfOf(id) > 0;
  }

  /** Number of entries holding `term`. */
  df(term: string): number {
    const id = this.termId(term);
    return id === undefined ? 0 : this.dfOf(id);
  }

  /** Adds `doc` (whose key must be free) with its analyzed text; returns its number. */
  add(doc: StoredDoc, analyzed: AnalyzedText): number {
    const key = docKey(doc.scope, doc.id);
    const keys = this.keys();
    if (keys.has(key)) throw new Error(`the entry ${JSON.stringify(doc.id)} is already indexed`);
    const n = this.docs.length;
    if (n >= this.lengths.length) this.grow(n * 2);
    this.docs.push(doc);
    keys.set(key, n);
    const length = analyzed.length;
    this.lengths[n] = length;
    const scope = this.scopeId(doc.scope);
    this.scopeOf[n] = scope;
    this.scopeDocs[scope]!.add(n, 1, 0);
    this.live++;
    this.totalLength += length;
    for (const term of analyzed.terms) {
      let id = this.termId(term);
      if (id === undefined) {
        id = this.terms.length;
        this.terms.push(term);
        this.termIds.set(term, id);
        this.postings.push(new Posting());
        this.vocabulary.add(term);
      }
      this.posting(id)!.add(n, 1, length);
    }
    return n;
  }

  /** Removes the entry under `key`, whose text analyzed to `analyzed`; returns it. */
  remove(key: string, analyzed: AnalyzedText): StoredDoc | undefined {
    const keys = this.keys();
    const n = keys.get(key);
    if (n === undefined) return undefined;
    const doc = this.docs[n]!;
    const seen = new Set<string>();
    for (const term of analyzed.terms) {
      if (seen.has(term)) continue;
      seen.add(term);
      const id = this.termId(term);
      if (id !== undefined) this.posting(id)!.remove(n);
    }
    this.scopeDocs[this.scopeOf[n]!]!.remove(n);
    this.docs[n] = undefined;
    keys.delete(key);
    this.live--;
    this.totalLength -= this.lengths[n]!;
    return doc;
  }

  /**
   * The `limit` best entries for `groups` among those whose scope path is in `visible`
   * (`undefined`: every entry), scoring at least `floor`, best first.
   */
  search(
    groups: readonly QueryGroup[],
    visible: readonly string[] | undefined,
    limit: number,
    floor: number,
    relevance: Relevance,
  ): Scored[] {
    if (this.live === 0 || limit === 0) return [];
    let mask: Uint8Array | undefined;
    let candidates: Posting[] | undefined;
    if (visible !== undefined) {
      mask = new Uint8Array(this.scopeDocs.length);
      let count = 0;
      const lists: Posting[] = [];
      for (const path of visible) {
        const id = this.scopeIds.get(path);
        if (id === undefined) continue;
        mask[id] = 1;
        count += this.scopeDocs[id]!.size;
        lists.push(this.scopeDocs[id]!);
      }
      if (count === 0) return [];
      if (count === this.live) mask = undefined;
      // Few visible entries: score them one by one instead of walking the postings.
      else if (count * 8 < this.live) candidates = lists;
    }
    return topK(
      {
        groups,
        resolve: (term) => {
          const id = this.termId(term);
          return id === undefined ? undefined : this.posting(id);
        },
        live: this.live,
        averageLength: this.live > 0 && this.totalLength > 0 ? this.totalLength / this.live : 1,
        lengths: this.lengths,
        alive: (n) => this.docs[n] !== undefined && (mask === undefined || mask[this.scopeOf[n]!] === 1),
        candidates,
      },
      limit,
      floor,
      relevance,
    );
  }

  /** The compact, serializable form: entries renumbered 0, 1, … in insertion order, terms sorted. */
  toCompact(): CompactIndex {
    const renumber = new Int32Array(this.docs.length).fill(-1);
    const docs: StoredDoc[] = [];
    const lengths: number[] = [];
    this.docs.forEach((doc, n) => {
      if (doc === undefined) return;
      renumber[n] = docs.length;
      docs.push(doc);
      lengths.push(this.lengths[n]!);
    });
    const terms = this.terms.filter((_, id) => this.dfOf(id) > 0).sort();
    const counts: number[] = [];
    const sizes: number[] = [];
    const writer = new PostingWriter();
    for (const term of terms) {
      const posting = this.posting(this.termId(term)!)!;
      const mapped = new Int32Array(posting.size);
      for (let k = 0; k < posting.size; k++) mapped[k] = renumber[posting.docs[k]!]!;
      counts.push(posting.size);
      sizes.push(writer.add(mapped, posting.tfs, posting.size));
    }
    return {
      docs,
      lengths,
      terms,
      counts,
      sizes,
      postings: Buffer.from(writer.finish()).toString("base64"),
    };
  }

  /**
   * A new index holding a compact form ({@link toCompact}) made with the same analyzer. Entries
   * must be checked already; postings are checked when first decoded.
   *
   * @throws {Error} when the form is inconsistent.
   */
  static fromCompact(body: CompactIndex): TextIndex {
    const { docs, lengths, terms, counts, sizes } = body;
    if (lengths.length !== docs.length) throw new Error("the entry lengths do not match the entries");
    if (counts.length !== terms.length || sizes.length !== terms.length) {
      throw new Error("the posting counts or sizes do not match the terms");
    }
    for (let t = 1; t < terms.length; t++) {
      if (!(terms[t - 1]! < terms[t]!)) throw new Error("the terms are not sorted and distinct");
    }
    const index = new TextIndex(Vocabulary.fromSorted(terms));
    index.grow(Math.max(1024, docs.length));
    index.docs = docs.slice();
    index.keyMap = undefined;
    for (let n = 0; n < docs.length; n++) {
      const doc = docs[n]!;
      const length = lengths[n]!;
      if (typeof length !== "number" || !(length >= 0)) throw new Error(`entry ${n} has an invalid length`);
      index.lengths[n] = length;
      const scope = index.scopeId(doc.scope);
      index.scopeOf[n] = scope;
      index.scopeDocs[scope]!.add(n, 1, 0);
      index.totalLength += length;
    }
    index.live = docs.length;
    const bytes = Buffer.from(body.postings, "base64");
    const starts = new Float64Array(terms.length + 1);
    for (let t = 0; t < terms.length; t++) {
      const size = sizes[t]!;
      const count = counts[t]!;
      if (
        !Number.isInteger(size) ||
        size < 1 ||
        !Number.isInteger(count) ||
        count < 1 ||
        count > docs.length
      ) {
        throw new Error(`the posting of term ${JSON.stringify(terms[t])} has an invalid size`);
      }
      starts[t + 1] = starts[t]! + size;
    }
    index.packedTerms = terms;
    index.terms = terms.slice();
    index.postings = new Array<Posting | undefined>(terms.length);
    if (starts[terms.length] !== bytes.length) throw new Error("the postings do not add up to their bytes");
    index.packed = { bytes, starts, counts, docLimit: docs.length };
    return index;
  }

  /** The id of `term`, if it was ever indexed. */
  private termId(term: string): number | undefined {
    const added = this.termIds.get(term);
    if (added !== undefined) return added;
    const sorted = this.packedTerms;
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (sorted[mid]! < term) lo = mid + 1;
      else hi = mid;
    }
    return lo < sorted.length && sorted[lo] === term ? lo : undefined;
  }

  /** Entry numbers by key, built from the entries the first time it is needed. */
  private keys(): Map<string, number> {
    if (this.keyMap !== undefined) return this.keyMap;
    const keys = new Map<string, number>();
    this.docs.forEach((doc, n) => {
      if (doc === undefined) return;
      const key = docKey(doc.scope, doc.id);
      if (keys.has(key)) {
        throw new MemoryError(
          "memory_corrupt",
          `The memory store's snapshot holds the entry id ${JSON.stringify(doc.id)} twice at scope ${doc.scope}. Restore memory.json.bak or remember the entries again.`,
          { details: { id: doc.id, scope: doc.scope } },
        );
      }
      keys.set(key, n);
    });
    this.keyMap = keys;
    return keys;
  }

  private dfOf(id: number): number {
    const posting = this.postings[id];
    if (posting !== undefined) return posting.size;
    return this.packed?.counts[id] ?? 0;
  }

  private posting(id: number): Posting | undefined {
    const posting = this.postings[id];
    if (posting !== undefined || this.packed === undefined || id >= this.packed.counts.length) return posting;
    const { bytes, starts, counts, docLimit } = this.packed;
    const count = counts[id]!;
    const docs = new Int32Array(count);
    const tfs = new Uint32Array(count);
    try {
      readPosting(bytes, starts[id]!, starts[id + 1]!, count, docLimit, docs, tfs);
    } catch (error) {
      throw new MemoryError(
        "memory_corrupt",
        `The memory store's index is damaged: the posting of term ${JSON.stringify(this.terms[id])} ${(error as Error).message.replace(/^a posting /, "")}. Restore memory.json.bak or remember the entries again.`,
        { cause: error, details: { term: this.terms[id] } },
      );
    }
    const decoded = Posting.of(docs, tfs, count, this.lengths);
    this.postings[id] = decoded;
    return decoded;
  }

  private scopeId(path: string): number {
    let id = this.scopeIds.get(path);
    if (id === undefined) {
      id = this.scopeDocs.length;
      this.scopeIds.set(path, id);
      this.scopeDocs.push(new Posting());
    }
    return id;
  }

  private grow(capacity: number): void {
    const lengths = new Float64Array(capacity);
    lengths.set(this.lengths.subarray(0, Math.min(this.lengths.length, capacity)));
    this.lengths = lengths;
    const scopeOf = new Int32Array(capacity);
    scopeOf.set(this.scopeOf.subarray(0, Math.min(this.scopeOf.length, capacity)));
    this.scopeOf = scopeOf;
  }
}
