import type { Posting } from "./posting.js";

/** BM25+ parameters: k1 (term-frequency saturation), b (length normalization), d (lower bound δ). */
export interface Relevance {
  readonly k1: number;
  readonly b: number;
  readonly d: number;
}

/**
 * One word of a query and the index terms that stand for it, each with a weight: the word itself
 * (1), its stems, completions of it as a prefix, terms a typo away. An entry's score for the word is
 * the best of its terms' weighted BM25 scores, so an entry holding several forms of one word does
 * not count it twice.
 */
export interface QueryGroup {
  readonly expansions: readonly { readonly term: string; readonly weight: number }[];
}

/** A scored entry number. */
export interface Scored {
  readonly doc: number;
  readonly score: number;
}

/** What {@link topK} reads from the index. */
export interface TopKSource {
  readonly groups: readonly QueryGroup[];
  resolve(term: string): Posting | undefined;
  /** Number of entries (for IDF). */
  readonly live: number;
  readonly averageLength: number;
  readonly lengths: Float64Array;
  /** Whether entry `n` exists and is visible to the query. */
  alive(n: number): boolean;
  /** When set, only the entries of these lists are candidates (few visible entries). */
  readonly candidates: readonly Posting[] | undefined;
}

const END = 0x7fffffff;

/** A query word's postings with a cursor each, and the smallest entry number under them. */
class Cursor {
  readonly postings: Posting[] = [];
  readonly factors: number[] = [];
  readonly positions: number[] = [];
  bound = 0;
  /** The smallest entry number at any of the cursors ({@link END} when all are exhausted). */
  current = END;

  private update(): void {
    let min = END;
    for (let e = 0; e < this.postings.length; e++) {
      const p = this.postings[e]!;
      const at = this.positions[e]!;
      if (at < p.size && p.docs[at]! < min) min = p.docs[at]!;
    }
    this.current = min;
  }

  /** Call once the postings are added. */
  start(): void {
    this.update();
  }

  /** Moves every cursor to its first entry >= `doc`. */
  seek(doc: number): void {
    if (this.current >= doc) return;
    for (let e = 0; e < this.postings.length; e++) {
      this.positions[e] = this.postings[e]!.find(doc, this.positions[e]!);
    }
    this.update();
  }

  /** Moves every cursor standing at `doc` past it. */
  pass(doc: number): void {
    if (this.current !== doc) return;
    for (let e = 0; e < this.postings.length; e++) {
      const at = this.positions[e]!;
      const p = this.postings[e]!;
      if (at < p.size && p.docs[at] === doc) this.positions[e] = at + 1;
    }
    this.update();
  }
}

/**
 * The `limit` best entries, best first (ties: earlier entries first), scoring at least `floor`.
 *
 * Dynamic pruning with MaxScore: each word has an upper bound on what it can add to any entry's
 * score (from the largest term frequency and shortest entry among its postings). Words are sorted
 * by bound; once `limit` entries are held, the words whose bounds together cannot lift an entry
 * above the weakest held one are "non-essential": only entries found in the other words' postings
 * are candidates, and a candidate's non-essential words are looked up (by galloping search) only
 * while they could still make a difference. A sentence-long query's common words then cost almost
 * nothing. Only `limit` entries are kept, in a min-heap.
 */
export function topK(source: TopKSource, limit: number, floor: number, relevance: Relevance): Scored[] {
  const { k1, b, d } = relevance;
  const N = source.live;
  const lengths = source.lengths;
  const average = source.averageLength;
  const norm = (length: number) => k1 * (1 - b + (b * length) / average);
  const cursors: Cursor[] = [];
  for (const group of source.groups) {
    const cursor = new Cursor();
    for (const { term, weight } of group.expansions) {
      const posting = source.resolve(term);
      if (posting === undefined || posting.size === 0 || !(weight > 0)) continue;
      const df = posting.size;
      const idf = Math.log(1 + (N - df + 0.5) / (df + 0.5));
      const factor = weight * idf;
      const tf = posting.maxTf;
      const bound = factor * ((tf * (k1 + 1)) / (tf + norm(posting.minLength)) + d);
      cursor.postings.push(posting);
      cursor.factors.push(factor);
      cursor.positions.push(0);
      if (bound > cursor.bound) cursor.bound = bound;
    }
    if (cursor.postings.length > 0) {
      cursor.start();
      cursors.push(cursor);
    }
  }
  if (cursors.length === 0) return [];
  cursors.sort((x, y) => x.bound - y.bound);
  const G = cursors.length;
  const prefix = new Float64Array(G);
  let running = 0;
  for (let g = 0; g < G; g++) {
    running += cursors[g]!.bound;
    prefix[g] = running;
  }

  const heapScores = new Float64Array(limit);
  const heapDocs = new Int32Array(limit);
  let held = 0;
  /** Whether an entry scoring at most `bound` can no longer be kept. */
  const hopeless = (bound: number) => (held < limit ? bound < floor : bound <= heapScores[0]!);
  const scoreAt = (cursor: Cursor, doc: number): number => {
    if (cursor.current !== doc) return 0;
    let best = 0;
    const n = norm(lengths[doc]!);
    for (let e = 0; e < cursor.postings.length; e++) {
      const p = cursor.postings[e]!;
      const at = cursor.positions[e]!;
      if (at < p.size && p.docs[at] === doc) {
        const tf = p.tfs[at]!;
        const s = cursor.factors[e]! * ((tf * (k1 + 1)) / (tf + n) + d);
        if (s > best) best = s;
      }
    }
    return best;
  };
  const offer = (doc: number, score: number) => {
    if (held < limit) {
      if (score < floor) return;
      let i = held++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (heapScores[parent]! < score || (heapScores[parent] === score && heapDocs[parent]! > doc)) break;
        heapScores[i] = heapScores[parent]!;
        heapDocs[i] = heapDocs[parent]!;
        i = parent;
      }
      heapScores[i] = score;
      heapDocs[i] = doc;
      return;
    }
    if (score <= heapScores[0]!) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= held) break;
      const r = l + 1;
      const c = r < held && lower(r, l) ? r : l;
      if (!lower(c, -1, score, doc)) break;
      heapScores[i] = heapScores[c]!;
      heapDocs[i] = heapDocs[c]!;
      i = c;
    }
    heapScores[i] = score;
    heapDocs[i] = doc;
  };
  /** Whether heap slot `a` ranks below slot `b` (or below the given score and entry). */
  const lower = (a: number, b: number, score?: number, doc?: number): boolean => {
    const sb = b >= 0 ? heapScores[b]! : score!;
    const db = b >= 0 ? heapDocs[b]! : doc!;
    const sa = heapScores[a]!;
    return sa < sb || (sa === sb && heapDocs[a]! > db);
  };

  if (source.candidates !== undefined) {
    // Few visible entries: walk them (merged in order) and look each word up.
    const lists = source.candidates;
    const at = lists.map(() => 0);
    for (;;) {
      let doc = END;
      for (let l = 0; l < lists.length; l++) {
        const list = lists[l]!;
        if (at[l]! < list.size && list.docs[at[l]!]! < doc) doc = list.docs[at[l]!]!;
      }
      if (doc === END) break;
      for (let l = 0; l < lists.length; l++) {
        const list = lists[l]!;
        if (at[l]! < list.size && list.docs[at[l]!] === doc) at[l]!++;
      }
      if (hopeless(prefix[G - 1]!)) break;
      if (!source.alive(doc)) continue;
      let score = 0;
      for (let g = G - 1; g >= 0; g--) {
        if (hopeless(score + prefix[g]!)) break;
        const cursor = cursors[g]!;
        cursor.seek(doc);
        score += scoreAt(cursor, doc);
      }
      if (score > 0) offer(doc, score);
    }
  } else {
    let essential = 0;
    while (essential < G && hopeless(prefix[essential]!)) essential++;
    while (essential < G) {
      let doc = END;
      for (let g = essential; g < G; g++) {
        const c = cursors[g]!.current;
        if (c < doc) doc = c;
      }
      if (doc === END) break;
      if (!source.alive(doc)) {
        for (let g = essential; g < G; g++) cursors[g]!.pass(doc);
        continue;
      }
      let score = 0;
      for (let g = essential; g < G; g++) {
        const cursor = cursors[g]!;
        score += scoreAt(cursor, doc);
        cursor.pass(doc);
      }
      for (let g = essential - 1; g >= 0; g--) {
        if (hopeless(score + prefix[g]!)) break;
        const cursor = cursors[g]!;
        cursor.seek(doc);
        score += scoreAt(cursor, doc);
      }
      offer(doc, score);
      while (essential < G && hopeless(prefix[essential]!)) essential++;
    }
  }
  const out: Scored[] = [];
  for (let i = 0; i < held; i++) out.push({ doc: heapDocs[i]!, score: heapScores[i]! });
  return out.sort((x, y) => y.score - x.score || x.doc - y.doc);
}
