/**
 * Unicode-aware analysis shared by indexing and querying.
 *
 * Text is folded (NFKC, typographic apostrophes unified, generic combining diacritics removed so
 * "cafe" finds "café") and split into words with `Intl.Segmenter` (root locale, so the result does
 * not depend on the host's locale; its dictionaries segment Chinese and Japanese into words). Each
 * word is indexed lower-cased; identifiers are also indexed in parts (`getUserName`, `user_name`,
 * `example.com`); words are also indexed by their stem in the entry's language (see
 * `language.ts`); runs of CJK characters are also indexed as character unigrams and bigrams, so a
 * query word matches inside a longer run whatever the segmenter made of it. Parts, stems and
 * n-grams are extra terms of the same words: an entry's length counts its words, not its terms.
 */
import { type LanguageSet, stemsOf, textLanguages } from "./language.js";

/** Bumped whenever the terms produced for some text change: snapshots of another version are re-indexed. */
export const TOKENIZER_VERSION = "openrath-unicode-2";

/** What the analyzer does beyond splitting words; each is a documented option of `bm25Memory`. */
export interface AnalyzerSettings {
  /** Languages whose stemmers are applied (none: no stemming). */
  readonly stemming: LanguageSet;
  /** Split identifiers at case changes and letter–digit boundaries (`getUserName` → get, user, name). */
  readonly identifiers: boolean;
  /** How an entry's length is counted: by words (CJK words as the segmenter cuts them) or by every term. */
  readonly lengthUnit: "words" | "terms";
  /** Normalized words never indexed nor searched. */
  readonly stopWords: ReadonlySet<string>;
}

/** The terms of a stored text (repeats are term frequencies) and its length for BM25. */
export interface AnalyzedText {
  readonly terms: string[];
  readonly length: number;
}

/**
 * One word of a query: the term itself, the stems it may have in the languages that apply, and
 * whether it may also match by prefix or by a small edit distance (whole words of letters only).
 */
export interface QueryTerm {
  readonly term: string;
  readonly stems: readonly string[];
  readonly expandable: boolean;
}

const DIACRITICS = /[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]/g;
const APOSTROPHES = /[\u2018\u2019\u02bc\uff07]/g;
const CJK_CHAR = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30fc]/u;
const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30fc]+/gu;
const PICTOGRAPHIC = /[\p{Extended_Pictographic}\p{Regional_Indicator}]/u;
/** Presentation selectors and skin-tone modifiers: 👍🏽 is found by 👍, ❤️ by ❤. */
const EMOJI_VARIATION = /[\ufe0e\ufe0f\u{1f3fb}-\u{1f3ff}]/gu;
const WORD_PART_SEPARATOR = /[^\p{L}\p{N}\p{M}]+/u;
/** Boundaries inside an identifier: aB, ABc (before the B), a1, 1a. */
const CASE_BOUNDARY =
  /(?<=\p{Ll})(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})|(?<=\p{L})(?=\p{N})|(?<=\p{N})(?=\p{L})/u;
const LETTERS_ONLY = /^[\p{L}\p{M}]+$/u;

let segmenter: Intl.Segmenter | undefined;

function wordSegmenter(): Intl.Segmenter {
  segmenter ??= new Intl.Segmenter("und", { granularity: "word" });
  return segmenter;
}

/** Longest piece of text handed to the segmenter at once (V8's segment iterator is quadratic in the input length). */
const PIECE = 512;
const SAFE_CUT = /[\s\u3000-\u3002\uff01\uff0c\uff1a\uff1b\uff1f]/u;

/**
 * The word segments of `text`, segmenting pieces of at most {@link PIECE} code units cut after
 * whitespace or CJK punctuation (word boundaries anyway), or hard at the limit when a piece has
 * none. Cut points depend on the text only, so a text always gets the same terms.
 */
function* segments(text: string): Generator<Intl.SegmentData> {
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + PIECE, text.length);
    if (end < text.length) {
      let cut = end;
      while (cut > start + PIECE / 4 && !SAFE_CUT.test(text[cut - 1]!)) cut--;
      if (cut > start + PIECE / 4) end = cut;
      else if (/[\udc00-\udfff]/.test(text[end]!)) end--;
    }
    yield* wordSegmenter().segment(text.slice(start, end));
    start = end;
  }
}

/** NFKC, apostrophes unified, diacritics removed; case kept (identifiers are split by case). */
function fold(text: string): string {
  return text
    .normalize("NFKC")
    .replace(APOSTROPHES, "'")
    .normalize("NFD")
    .replace(DIACRITICS, "")
    .normalize("NFC");
}

function lower(word: string): string {
  const out = word.toLowerCase();
  return out.includes("ß") || out.includes("ς") ? out.replace(/ß/g, "ss").replace(/ς/g, "σ") : out;
}

/**
 * The normalized form of `text` that terms are cut from: NFKC, lower case, diacritics removed.
 *
 * @example normalizeText("Café ＡＢＣ") // "cafe abc"
 */
export function normalizeText(text: string): string {
  return lower(fold(text));
}

/** Calls `emit` for the parts of a word segment (cased) that are worth a term of their own. */
function eachPart(segment: string, identifiers: boolean, emit: (part: string) => void): void {
  const pieces = segment.split(WORD_PART_SEPARATOR);
  const parts: string[] = [];
  for (const piece of pieces) {
    if (piece === "") continue;
    if (!identifiers) {
      parts.push(piece);
      continue;
    }
    for (const sub of piece.split(CASE_BOUNDARY)) if (sub !== "") parts.push(sub);
  }
  if (parts.length < 2) return;
  for (const part of parts) {
    // Single letters ("s" of "carol's", "t" of "don't") match nearly everything; digits stay.
    if (part.length === 1 && !/\p{N}/u.test(part)) continue;
    emit(lower(part));
  }
}

/** Visits the words of `text`: each word-like segment (cased, folded) and each emoji. */
function eachWord(
  text: string,
  visit: (segment: string, cjk: boolean) => void,
  emoji: (e: string) => void,
): void {
  for (const { segment, isWordLike } of segments(text)) {
    if (isWordLike) visit(segment, CJK_CHAR.test(segment));
    else if (PICTOGRAPHIC.test(segment)) {
      const e = segment.replace(EMOJI_VARIATION, "");
      if (e !== "") emoji(e);
    }
  }
}

/**
 * The terms of a stored text, with repeats, and its length: one per word (a CJK word as the
 * segmenter cut it, an emoji), or with `lengthUnit: "terms"` one per term.
 */
export function analyze(text: string, settings: AnalyzerSettings): AnalyzedText {
  const folded = fold(text);
  const { stopWords, identifiers } = settings;
  const languages =
    settings.stemming.size === 0 ? settings.stemming : textLanguages(folded, settings.stemming);
  const terms: string[] = [];
  let words = 0;
  const add = (term: string) => {
    if (!stopWords.has(term)) terms.push(term);
  };
  const addWord = (term: string) => {
    add(term);
    if (term.length >= 3 && LETTERS_ONLY.test(term)) {
      for (const stem of stemsOf(term, languages)) if (stem !== term) add(stem);
    }
  };
  eachWord(
    folded,
    (segment, cjk) => {
      const word = lower(segment);
      if (stopWords.has(word)) return;
      words++;
      if (cjk) {
        // Words of one or two characters are among the unigrams and bigrams below.
        if (Array.from(word).length > 2) add(word);
        return;
      }
      addWord(word);
      eachPart(segment, identifiers, addWord);
    },
    (emoji) => {
      words++;
      add(emoji);
    },
  );
  for (const [run] of folded.matchAll(CJK_RUN)) {
    const chars = Array.from(lower(run));
    for (let i = 0; i < chars.length; i++) add(chars[i]!);
    for (let i = 0; i + 1 < chars.length; i++) add(chars[i]! + chars[i + 1]!);
  }
  return { terms, length: settings.lengthUnit === "terms" ? terms.length : words };
}

/**
 * The terms of a query, each once. A CJK run longer than one character contributes its bigrams
 * (and its words longer than two characters) but not its single characters, which would match
 * nearly every CJK entry. Stems are those of every stemming language of the word's script: a
 * query is too short to tell its language reliably, and a stem of the wrong language simply
 * matches nothing.
 */
export function analyzeQuery(text: string, settings: AnalyzerSettings): QueryTerm[] {
  const folded = fold(text);
  const { stopWords, identifiers, stemming } = settings;
  const out = new Map<string, QueryTerm>();
  const add = (term: string, word: boolean) => {
    if (stopWords.has(term) || out.has(term)) return;
    const letters = word && LETTERS_ONLY.test(term);
    const stems =
      letters && term.length >= 3 && stemming.size > 0
        ? stemsOf(term, stemming).filter((s) => s !== term)
        : [];
    out.set(term, { term, stems, expandable: letters });
  };
  eachWord(
    folded,
    (segment, cjk) => {
      const word = lower(segment);
      if (cjk) {
        if (Array.from(word).length > 2) add(word, false);
        return;
      }
      add(word, true);
      eachPart(segment, identifiers, (part) => add(part, true));
    },
    (emoji) => add(emoji, false),
  );
  for (const [run] of folded.matchAll(CJK_RUN)) {
    const chars = Array.from(lower(run));
    if (chars.length === 1) add(chars[0]!, false);
    for (let i = 0; i + 1 < chars.length; i++) add(chars[i]! + chars[i + 1]!, false);
  }
  return [...out.values()];
}
