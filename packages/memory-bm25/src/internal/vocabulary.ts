/**
 * The index's terms, for the query expansions that look beyond an exact term: completions of a
 * prefix (from a sorted list, kept sorted lazily as terms arrive) and terms within a small edit
 * distance (from buckets by length and first letter, with a cheap character-set filter before the
 * distance). A near term must start with the word's first or second letter: typos rarely hit the
 * first letter, and a swap of the first two letters is covered.
 */
export class Vocabulary {
  private sorted: string[] = [];
  /** Terms added since `sorted` was last merged, unsorted. */
  private recent: string[] = [];
  /**
   * Letter-only terms by length and first letter, each with a signature of its characters (see
   * {@link signature}); built on the first typo lookup, so opening a large store does not pay for it.
   */
  private buckets: Map<string, { terms: string[]; signatures: number[] }> | undefined;

  /** A vocabulary over `terms`, which must be sorted (snapshots keep them so). */
  static fromSorted(terms: readonly string[]): Vocabulary {
    const vocabulary = new Vocabulary();
    vocabulary.sorted = terms.slice();
    return vocabulary;
  }

  /** Adds a term seen for the first time. */
  add(term: string): void {
    this.recent.push(term);
    if (this.buckets !== undefined) this.bucket(this.buckets, term);
  }

  /**
   * Up to `limit` terms that start with `prefix` and are longer, shortest first, for which `keep`
   * holds (it says whether a term still has entries).
   */
  completions(prefix: string, limit: number, keep: (term: string) => boolean): string[] {
    if (
      this.recent.length > 2048 ||
      (this.recent.length > 0 && this.recent.length * 16 > this.sorted.length)
    ) {
      this.merge();
    }
    const found: string[] = [];
    const sorted = this.sorted;
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (sorted[mid]! < prefix) lo = mid + 1;
      else hi = mid;
    }
    // Bounded: a short prefix can have thousands of completions; the shortest are kept.
    for (let i = lo; i < sorted.length && found.length < limit * 8; i++) {
      const term = sorted[i]!;
      if (!term.startsWith(prefix)) break;
      if (term.length > prefix.length && keep(term)) found.push(term);
    }
    for (const term of this.recent) {
      if (term.length > prefix.length && term.startsWith(prefix) && keep(term)) found.push(term);
    }
    return found.sort((a, b) => a.length - b.length || (a < b ? -1 : 1)).slice(0, limit);
  }

  /**
   * Terms of letters within `maxEdits` edits (insertion, deletion, substitution, transposition of
   * neighbours) of `word`, other than `word`, closest first, up to `limit`, for which `keep` holds.
   */
  near(
    word: string,
    maxEdits: number,
    limit: number,
    keep: (term: string) => boolean,
  ): { term: string; edits: number }[] {
    const found: { term: string; edits: number }[] = [];
    if (this.buckets === undefined) {
      const buckets = new Map<string, { terms: string[]; signatures: number[] }>();
      for (const term of this.sorted) this.bucket(buckets, term);
      for (const term of this.recent) this.bucket(buckets, term);
      this.buckets = buckets;
    }
    const buckets = this.buckets;
    const wanted = signature(word);
    const firsts = word.length > 1 && word[1] !== word[0] ? [word[0]!, word[1]!] : [word[0]!];
    for (let length = word.length - maxEdits; length <= word.length + maxEdits; length++) {
      for (const first of firsts) {
        const bucket = buckets.get(`${length}:${first}`);
        if (!bucket) continue;
        const { terms, signatures } = bucket;
        for (let i = 0; i < terms.length; i++) {
          // Each edit changes at most two bits of the signature.
          if (popcount(signatures[i]! ^ wanted) > 2 * maxEdits) continue;
          const term = terms[i]!;
          if (term === word) continue;
          const edits = boundedDistance(word, term, maxEdits);
          if (edits <= maxEdits && keep(term)) found.push({ term, edits });
        }
      }
    }
    return found.sort((a, b) => a.edits - b.edits || (a.term < b.term ? -1 : 1)).slice(0, limit);
  }

  private bucket(buckets: Map<string, { terms: string[]; signatures: number[] }>, term: string): void {
    if (term.length < 3 || !/^[\p{L}\p{M}]+$/u.test(term)) return;
    const key = `${term.length}:${term[0]}`;
    let bucket = buckets.get(key);
    if (!bucket) {
      bucket = { terms: [], signatures: [] };
      buckets.set(key, bucket);
    }
    bucket.terms.push(term);
    bucket.signatures.push(signature(term));
  }

  private merge(): void {
    const recent = this.recent.sort();
    const merged = new Array<string>(this.sorted.length + recent.length);
    let i = 0;
    let j = 0;
    let k = 0;
    while (i < this.sorted.length && j < recent.length) {
      merged[k++] = this.sorted[i]! <= recent[j]! ? this.sorted[i++]! : recent[j++]!;
    }
    while (i < this.sorted.length) merged[k++] = this.sorted[i++]!;
    while (j < recent.length) merged[k++] = recent[j++]!;
    this.sorted = merged;
    this.recent = [];
  }
}

/** A 32-bit set of the characters of `term` (by code modulo 32). */
function signature(term: string): number {
  let bits = 0;
  for (let i = 0; i < term.length; i++) bits |= 1 << (term.charCodeAt(i) & 31);
  return bits >>> 0;
}

function popcount(value: number): number {
  let v = value - ((value >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/**
 * The optimal-string-alignment distance of `a` and `b` (Levenshtein plus transposition of
 * neighbours), or `max + 1` as soon as it must exceed `max`.
 */
export function boundedDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const n = b.length;
  let before = new Array<number>(n + 1).fill(0);
  let previous = Array.from({ length: n + 1 }, (_, j) => j);
  let current = new Array<number>(n + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let rowMin = i;
    for (let j = 1; j <= n; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, before[j - 2]! + 1);
      }
      current[j] = value;
      if (value < rowMin) rowMin = value;
    }
    if (rowMin > max) return max + 1;
    [before, previous, current] = [previous, current, before];
  }
  return previous[n]!;
}
