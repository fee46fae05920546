import type { Matching } from "./settings.js";
import type { TextIndex } from "./text-index.js";
import { type AnalyzerSettings, analyzeQuery } from "./tokenize.js";
import type { QueryGroup } from "./top-k.js";

/** Most completions a query word expands to. */
const MAX_COMPLETIONS = 8;
/** Most near terms a misspelt query word expands to. */
const MAX_NEAR = 4;
/** Weight of a completion is this times (word length / completion length). */
const PREFIX_WEIGHT = 0.5;
/** Shortest query word that is completed as a prefix. */
const PREFIX_MIN_LENGTH = 3;
/**
 * A query word held by more than this share of the entries (and more than
 * {@link PREFIX_COMMON_FLOOR} of them) is not completed: it says little, and its completions
 * (`the` → `them`, `there`) would add long postings of their own.
 */
const PREFIX_MAX_SHARE = 1 / 16;
const PREFIX_COMMON_FLOOR = 100;
/** Weights of terms one and two edits away. */
const FUZZY_WEIGHTS = [1, 0.5, 0.3] as const;

/** Edits allowed for a misspelt word of `length` letters: none below 4, one from 4, two from 8. */
export function maxEdits(length: number): number {
  return length >= 8 ? 2 : length >= 4 ? 1 : 0;
}

/**
 * The query words of `query` with the index terms standing for each: the word (weight 1), its
 * stems (`matching.stemWeight`), with `prefix` the shortest completions of a word of at least 3
 * letters held by at most 1 in 16 entries (or 100), and with `fuzzy`, for a word that matches nothing as it is or by its stems, the terms
 * a typo or two away. Words none of whose terms are in the index drop out.
 */
export function queryPlan(
  query: string,
  index: TextIndex,
  analyzer: AnalyzerSettings,
  matching: Matching,
): QueryGroup[] {
  const groups: QueryGroup[] = [];
  const has = (term: string) => index.has(term);
  for (const { term, stems, expandable } of analyzeQuery(query, analyzer)) {
    const expansions: { term: string; weight: number }[] = [];
    const seen = new Set<string>();
    const push = (t: string, weight: number) => {
      if (seen.has(t) || !has(t)) return;
      seen.add(t);
      expansions.push({ term: t, weight });
    };
    push(term, 1);
    for (const stem of stems) push(stem, matching.stemWeight);
    const exact = expansions.length > 0;
    if (
      expandable &&
      matching.prefix &&
      term.length >= PREFIX_MIN_LENGTH &&
      index.df(term) <= Math.max(index.size * PREFIX_MAX_SHARE, PREFIX_COMMON_FLOOR)
    ) {
      for (const completion of index.vocabulary.completions(term, MAX_COMPLETIONS, has)) {
        push(completion, (PREFIX_WEIGHT * term.length) / completion.length);
      }
    }
    const edits = maxEdits(term.length);
    if (expandable && matching.fuzzy && !exact && edits > 0) {
      for (const near of index.vocabulary.near(term, edits, MAX_NEAR, has)) {
        push(near.term, FUZZY_WEIGHTS[near.edits]!);
      }
    }
    if (expansions.length > 0) groups.push({ expansions });
  }
  return groups;
}
