/**
 * Unicode-aware tokenization shared by indexing and querying.
 *
 * Text is normalized (NFKC, lower case, German sharp s and Greek final sigma folded, typographic
 * apostrophes unified, generic combining diacritics removed so "cafe" finds "café"), split into
 * words with `Intl.Segmenter` (root locale, so the result does not depend on the host's locale),
 * and emoji are kept as tokens. Runs of CJK characters (Han, Hiragana, Katakana, Hangul) are also
 * indexed as character unigrams and bigrams, so a query word matches inside a longer run whatever
 * the segmenter made of it.
 */

/** Bumped whenever the tokens produced for some text change: snapshots of another version are re-indexed. */
export const TOKENIZER_VERSION = "openrath-unicode-1";

/** Whether tokens are produced for a stored text (`index`) or for a query (`query`). */
export type TokenizeMode = "index" | "query";

/** Combining marks that act as diacritics on Latin, Greek and Cyrillic letters (not marks that are letters of other scripts). */
const DIACRITICS = /[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]/g;
const APOSTROPHES = /[\u2018\u2019\u02bc\uff07]/g;
const CJK_CHAR = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30fc]/u;
const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30fc]+/gu;
const PICTOGRAPHIC = /[\p{Extended_Pictographic}\p{Regional_Indicator}]/u;
/** Presentation selectors and skin-tone modifiers: 👍🏽 is found by 👍, ❤️ by ❤. */
const EMOJI_VARIATION = /[\ufe0e\ufe0f\u{1f3fb}-\u{1f3ff}]/gu;
const WORD_PART_SEPARATOR = /[^\p{L}\p{N}\p{M}]+/u;

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
 * none. Cut points depend on the text only, so a text always gets the same tokens.
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

/**
 * The normalized form of `text` that tokens are cut from: NFKC, lower case, diacritics removed.
 *
 * @example normalizeText("Café ＡＢＣ") // "cafe abc"
 */
export function normalizeText(text: string): string {
  return text
    .normalize("NFKC")
    .toLowerCase()
    .replace(/ß/g, "ss")
    .replace(/ς/g, "σ")
    .replace(APOSTROPHES, "'")
    .normalize("NFD")
    .replace(DIACRITICS, "")
    .normalize("NFC");
}

/**
 * The tokens of `text`. In `index` mode repeated words repeat (they are term frequencies); in
 * `query` mode each token appears once, and a CJK run longer than one character contributes its
 * bigrams but not its single characters (which would match nearly every CJK entry).
 *
 * @param stopWords - normalized tokens to drop (none by default).
 */
export function tokenize(text: string, mode: TokenizeMode, stopWords?: ReadonlySet<string>): string[] {
  const normalized = normalizeText(text);
  const tokens: string[] = [];
  for (const { segment, isWordLike } of segments(normalized)) {
    if (isWordLike) {
      if (CJK_CHAR.test(segment)) {
        // Words of one or two characters are already among the unigrams and bigrams below.
        if (Array.from(segment).length > 2) tokens.push(segment);
      } else {
        tokens.push(segment);
        // "example.com", "foo_bar", "don't": the whole word and its parts are both searchable.
        const parts = segment.split(WORD_PART_SEPARATOR).filter((p) => p !== "");
        if (parts.length > 1) tokens.push(...parts);
      }
    } else if (PICTOGRAPHIC.test(segment)) {
      const emoji = segment.replace(EMOJI_VARIATION, "");
      if (emoji !== "") tokens.push(emoji);
    }
  }
  for (const [run] of normalized.matchAll(CJK_RUN)) {
    const chars = Array.from(run);
    if (mode === "index" || chars.length === 1) tokens.push(...chars);
    for (let i = 0; i + 1 < chars.length; i++) tokens.push(chars[i]! + chars[i + 1]!);
  }
  const kept = stopWords && stopWords.size > 0 ? tokens.filter((t) => !stopWords.has(t)) : tokens;
  return mode === "query" ? Array.from(new Set(kept)) : kept;
}
