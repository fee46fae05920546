import { MemoryError } from "@openrath/core";
import { type DocsWriter, DocTable, docKey, type PackedDocs, type StoredDoc } from "./doc-table.js";
import { LoadedPostings, PostingWriter } from "./packed-postings.js";
import { Posting } from "./posting.js";
import type { AnalyzedText } from "./tokenize.js";
import { type QueryGroup, type Relevance, type Scored, topK } from "./top-k.js";
import { Vocabulary } from "./vocabulary.js";

export { docKey, type StoredDoc } from "./doc-table.js";

/** The index as a snapshot holds it (format version 4): columns per entry and per term. */
export interface PackedIndex {
  /** The entries; entry `i` is number `i` in the postings. */
  readonly docs: PackedDocs;
  /** Each entry's length for BM25 (in the unit the analyzer counts). */
  readonly lengths: Float64Array;
  /** Every term with entries, sorted. */
  readonly terms: readonly string[];
  /** Per term, how many entries hold it. */
  readonly counts: Uint32Array;
  /** Per term, the size in bytes of its packed posting. */
  readonly sizes: Uint32Array;
  /** The packed postings of the terms, in order (see `packed-postings.ts`). */
  readonly postings: Uint8Array;
}

/**
 * The full-text index of a store: entries by number, their scopes and lengths, and per term a
 * posting list. Entries loaded from a snapshot stay in its columns until read, and terms keep their
 * postings packed until a query uses them.
 */
export class TextIndex {
  readonly vocabulary: Vocabulary;
  /** Ids of the terms added since the snapshot; the snapshot's own are found in {@link loaded}. */
  private readonly termIds = new Map<string, number>();
  /** The snapshot's terms and postings: its term `i` has id `i`. */
  private loaded: LoadedPostings | undefined;
  private terms: string[] = [];
  /** Decoded postings by term id (a loaded term's once a query or a change needed it). */
  private postings: (Posting | undefined)[] = [];

  private docs = new DocTable();
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
    return n === undefined ? undefined : this.docs.get(n);
  }

  /** Whether an entry is stored under `key`, without reading it. */
  hasKey(key: string): boolean {
    return this.keys().has(key);
  }

  /** The entry numbered `n`, if it is live. */
  doc(n: number): StoredDoc | undefined {
    return this.docs.get(n);
  }

  /** The entries in insertion order. */
  *all(): Generator<StoredDoc> {
    for (let n = 0; n < this.docs.length; n++) {
      const doc = this.docs.get(n);
      if (doc !== undefined) yield doc;
    }
  }

  /** The scope and id of every entry in insertion order, without reading their texts. */
  *heads(): Generator<{ readonly scope: string; readonly id: string }> {
    for (let n = 0; n < this.docs.length; n++) {
      if (this.docs.isLive(n)) yield { scope: this.docs.scope(n), id: this.docs.id(n) };
    }
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
    const n = this.docs.push(doc);
    if (n >= this.lengths.length) this.grow(n * 2);
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

  /** Removes the entry under `key`, whose text analyzed to `analyzed`. */
  remove(key: string, analyzed: AnalyzedText): void {
    const keys = this.keys();
    const n = keys.get(key);
    if (n === undefined) return;
    const seen = new Set<string>();
    for (const term of analyzed.terms) {
      if (seen.has(term)) continue;
      seen.add(term);
      const id = this.termId(term);
      if (id !== undefined) this.posting(id)!.remove(n);
    }
    this.scopeDocs[this.scopeOf[n]!]!.remove(n);
    this.docs.delete(n);
    keys.delete(key);
    this.live--;
    this.totalLength -= this.lengths[n]!;
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
    const docs = this.docs;
    const scopeOf = this.scopeOf;
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
        alive: mask === undefined ? (n) => docs.isLive(n) : (n) => docs.isLive(n) && mask[scopeOf[n]!] === 1,
        candidates,
      },
      limit,
      floor,
      relevance,
    );
  }

  /**
   * The packed form a snapshot holds: entries renumbered 0, 1, … in insertion order (a loaded
   * entry's columns are copied, not decoded), terms sorted. A posting still packed as it was loaded
   * is copied as it is when no loaded entry was removed since (its numbers are unchanged); others
   * are encoded again, without keeping the decoded form.
   */
  pack(writer: DocsWriter): PackedIndex {
    const renumber = new Int32Array(this.docs.length).fill(-1);
    const lengths = new Float64Array(this.live);
    let kept = 0;
    for (let n = 0; n < this.docs.length; ) {
      if (!this.docs.isLive(n)) {
        n++;
        continue;
      }
      const end = this.docs.runEnd(n);
      for (let k = n; k < end; k++) {
        renumber[k] = kept;
        lengths[kept++] = this.lengths[k]!;
      }
      this.docs.writeRun(writer, n, end);
      n = end;
    }
    const loaded = this.loaded;
    let unchanged = loaded !== undefined;
    for (let n = 0; unchanged && loaded !== undefined && n < loaded.entries; n++) {
      if (renumber[n] !== n) unchanged = false;
    }
    /** Whether term `id`'s posting can be copied as it was loaded. */
    const verbatim = (id: number) =>
      unchanged && id < (loaded?.terms.length ?? 0) && this.postings[id] === undefined;
    const order = this.termOrder();
    const terms = new Array<string>(order.length);
    const counts = new Uint32Array(order.length);
    const sizes = new Uint32Array(order.length);
    const out = new PostingWriter();
    for (let t = 0; t < order.length; ) {
      const id = order[t]!;
      if (loaded !== undefined && verbatim(id)) {
        // A run of consecutive loaded terms, none decoded: their bytes in one copy.
        let end = t + 1;
        while (end < order.length && order[end] === order[end - 1]! + 1 && verbatim(order[end]!)) end++;
        loaded.copyTo(out, id, order[end - 1]!);
        for (let k = t; k < end; k++) {
          const termId = order[k]!;
          terms[k] = this.terms[termId]!;
          counts[k] = loaded.count(termId);
          sizes[k] = loaded.size(termId);
        }
        t = end;
        continue;
      }
      const posting = this.postings[id] ?? this.decode(id);
      const mapped = new Int32Array(posting.size);
      for (let k = 0; k < posting.size; k++) mapped[k] = renumber[posting.docs[k]!]!;
      terms[t] = this.terms[id]!;
      counts[t] = posting.size;
      sizes[t] = out.add(mapped, posting.tfs, posting.size);
      t++;
    }
    return { docs: writer.finish(), lengths, terms, counts, sizes, postings: out.finish() };
  }

  /**
   * The ids of the terms with entries, in term order: the snapshot's terms (sorted already, their
   * ids in order) merged with the terms added since, sorted here.
   */
  private termOrder(): number[] {
    const loaded = this.loaded?.terms.length ?? 0;
    const added: number[] = [];
    for (let id = loaded; id < this.terms.length; id++) if (this.dfOf(id) > 0) added.push(id);
    added.sort((a, b) => (this.terms[a]! < this.terms[b]! ? -1 : 1));
    const order: number[] = [];
    let j = 0;
    for (let id = 0; id < loaded; id++) {
      if (this.dfOf(id) === 0) continue;
      while (j < added.length && this.terms[added[j]!]! < this.terms[id]!) order.push(added[j++]!);
      order.push(id);
    }
    while (j < added.length) order.push(added[j++]!);
    return order;
  }

  /**
   * A new index over a packed form ({@link pack}) made with the same analyzer. The columns are
   * checked here; postings when first decoded, an entry's metadata when it is first read.
   *
   * @throws {Error} when the form is inconsistent.
   */
  static fromPacked(body: PackedIndex): TextIndex {
    const { docs, lengths, terms } = body;
    const count = docs.count;
    if (lengths.length !== count) throw new Error("the entry lengths do not match the entries");
    const loaded = LoadedPostings.of(terms, body.counts, body.sizes, body.postings, count);
    const index = new TextIndex(Vocabulary.fromSorted(terms));
    index.grow(Math.max(1024, count));
    index.docs = new DocTable(docs);
    index.keyMap = undefined;
    // The table checked the scope numbers; they become the index's scope ids, in order.
    for (const scope of docs.scopes) index.scopeId(scope);
    if (index.scopeDocs.length !== docs.scopes.length) throw new Error("the scopes are not distinct");
    let total = 0;
    for (let n = 0; n < count; n++) {
      const length = lengths[n]!;
      if (!(length >= 0) || length === Number.POSITIVE_INFINITY)
        throw new Error(`entry ${n} has an invalid length`);
      const scope = docs.scopeOf[n]!;
      index.scopeOf[n] = scope;
      index.scopeDocs[scope]!.add(n, 1, 0);
      total += length;
    }
    index.lengths.set(lengths);
    index.totalLength = total;
    index.live = count;
    index.loaded = loaded;
    index.terms = terms.slice();
    index.postings = new Array<Posting | undefined>(terms.length);
    return index;
  }

  /** The id of `term`, if it was ever indexed. */
  private termId(term: string): number | undefined {
    return this.termIds.get(term) ?? this.loaded?.find(term);
  }

  /** Entry numbers by key, built from the entries' ids and scopes the first time it is needed. */
  private keys(): Map<string, number> {
    this.keyMap ??= this.docs.keys();
    return this.keyMap;
  }

  private dfOf(id: number): number {
    const posting = this.postings[id];
    if (posting !== undefined) return posting.size;
    return this.loaded !== undefined && id < this.loaded.terms.length ? this.loaded.count(id) : 0;
  }

  private posting(id: number): Posting | undefined {
    const posting = this.postings[id];
    if (posting !== undefined || this.loaded === undefined || id >= this.loaded.terms.length) return posting;
    const decoded = this.decode(id);
    this.postings[id] = decoded;
    return decoded;
  }

  /** The loaded posting of term `id`, decoded. */
  private decode(id: number): Posting {
    const loaded = this.loaded!;
    const count = loaded.count(id);
    const docs = new Int32Array(count);
    const tfs = new Uint32Array(count);
    try {
      loaded.decode(id, docs, tfs);
    } catch (error) {
      throw new MemoryError(
        "memory_corrupt",
        `The memory store's index is damaged: the posting of term ${JSON.stringify(this.terms[id])} ${(error as Error).message.replace(/^a posting /, "")}. Restore memory.json.bak or remember the entries again.`,
        { cause: error, details: { term: this.terms[id] } },
      );
    }
    return Posting.of(docs, tfs, count, this.lengths);
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
