/**
 * Stemming per language with the Snowball-family stemmers of `@orama/stemmers`, and the choice of
 * the languages that apply to a text. A word's script decides among scripts (Cyrillic words get
 * the Cyrillic stemmers, Greek words the Greek one); among the languages of the Latin script an
 * entry's language is detected from its function words (the stop-word lists of
 * `@orama/stopwords`). An entry with no clear winner is stemmed in every enabled Latin language.
 */
import { stemmer as bulgarian } from "@orama/stemmers/bulgarian";
import { stemmer as danish } from "@orama/stemmers/danish";
import { stemmer as dutch } from "@orama/stemmers/dutch";
import { stemmer as english } from "@orama/stemmers/english";
import { stemmer as finnish } from "@orama/stemmers/finnish";
import { stemmer as french } from "@orama/stemmers/french";
import { stemmer as german } from "@orama/stemmers/german";
import { stemmer as greek } from "@orama/stemmers/greek";
import { stemmer as hungarian } from "@orama/stemmers/hungarian";
import { stemmer as italian } from "@orama/stemmers/italian";
import { stemmer as norwegian } from "@orama/stemmers/norwegian";
import { stemmer as portuguese } from "@orama/stemmers/portuguese";
import { stemmer as romanian } from "@orama/stemmers/romanian";
import { stemmer as russian } from "@orama/stemmers/russian";
import { stemmer as spanish } from "@orama/stemmers/spanish";
import { stemmer as swedish } from "@orama/stemmers/swedish";
import { stemmer as turkish } from "@orama/stemmers/turkish";
import { stemmer as ukrainian } from "@orama/stemmers/ukrainian";
import { stopwords as danishStop } from "@orama/stopwords/danish";
import { stopwords as dutchStop } from "@orama/stopwords/dutch";
import { stopwords as englishStop } from "@orama/stopwords/english";
import { stopwords as finnishStop } from "@orama/stopwords/finnish";
import { stopwords as frenchStop } from "@orama/stopwords/french";
import { stopwords as germanStop } from "@orama/stopwords/german";
import { stopwords as hungarianStop } from "@orama/stopwords/hungarian";
import { stopwords as italianStop } from "@orama/stopwords/italian";
import { stopwords as norwegianStop } from "@orama/stopwords/norwegian";
import { stopwords as portugueseStop } from "@orama/stopwords/portuguese";
import { stopwords as romanianStop } from "@orama/stopwords/romanian";
import { stopwords as spanishStop } from "@orama/stopwords/spanish";
import { stopwords as swedishStop } from "@orama/stopwords/swedish";
import { stopwords as turkishStop } from "@orama/stopwords/turkish";

type Script = "latin" | "cyrillic" | "greek";

interface LanguageInfo {
  readonly script: Script;
  readonly stem: (word: string) => string;
  readonly stopWords?: readonly string[];
}

const LANGUAGES = {
  english: { script: "latin", stem: english, stopWords: englishStop },
  french: { script: "latin", stem: french, stopWords: frenchStop },
  german: { script: "latin", stem: german, stopWords: germanStop },
  spanish: { script: "latin", stem: spanish, stopWords: spanishStop },
  italian: { script: "latin", stem: italian, stopWords: italianStop },
  portuguese: { script: "latin", stem: portuguese, stopWords: portugueseStop },
  dutch: { script: "latin", stem: dutch, stopWords: dutchStop },
  swedish: { script: "latin", stem: swedish, stopWords: swedishStop },
  norwegian: { script: "latin", stem: norwegian, stopWords: norwegianStop },
  danish: { script: "latin", stem: danish, stopWords: danishStop },
  finnish: { script: "latin", stem: finnish, stopWords: finnishStop },
  hungarian: { script: "latin", stem: hungarian, stopWords: hungarianStop },
  romanian: { script: "latin", stem: romanian, stopWords: romanianStop },
  turkish: { script: "latin", stem: turkish, stopWords: turkishStop },
  russian: { script: "cyrillic", stem: russian },
  ukrainian: { script: "cyrillic", stem: ukrainian },
  bulgarian: { script: "cyrillic", stem: bulgarian },
  greek: { script: "greek", stem: greek },
} satisfies Record<string, LanguageInfo>;

/** A language with a stemmer. */
export type StemLanguage = keyof typeof LANGUAGES;

/** Every language with a stemmer, in a stable order. */
export const STEM_LANGUAGES = Object.keys(LANGUAGES) as StemLanguage[];

/** The languages `stemming: "auto"` (the default) enables. */
export const DEFAULT_STEM_LANGUAGES: readonly StemLanguage[] = [
  "english",
  "french",
  "german",
  "spanish",
  "italian",
  "portuguese",
  "dutch",
  "russian",
  "greek",
];

/** A set of enabled stemming languages. */
export type LanguageSet = ReadonlySet<StemLanguage>;

const CYRILLIC = /\p{Script=Cyrillic}/u;
const GREEK = /\p{Script=Greek}/u;
const LATIN = /\p{Script=Latin}/u;

function scriptOf(word: string): Script | undefined {
  const first = word[0]!;
  if (LATIN.test(first)) return "latin";
  if (CYRILLIC.test(first)) return "cyrillic";
  if (GREEK.test(first)) return "greek";
  return undefined;
}

const stopIndex = new Map<string, Map<string, StemLanguage[]>>();

/** Normalized function words → the enabled Latin languages they belong to. */
function functionWords(enabled: LanguageSet): Map<string, StemLanguage[]> {
  const key = [...enabled].sort().join(",");
  let index = stopIndex.get(key);
  if (index) return index;
  index = new Map();
  for (const language of enabled) {
    const info: LanguageInfo = LANGUAGES[language];
    for (const word of info.stopWords ?? []) {
      const normalized = word.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();
      const list = index.get(normalized) ?? [];
      if (!list.includes(language)) list.push(language);
      index.set(normalized, list);
    }
  }
  stopIndex.set(key, index);
  return index;
}

const WORD = /[\p{L}\p{M}']+/gu;

/**
 * The enabled languages that apply to `text` (folded, any case): every enabled non-Latin language,
 * and of the Latin ones the one whose function words occur most often (at least twice as often as
 * the runner-up), or all of them when none stands out.
 */
export function textLanguages(text: string, enabled: LanguageSet): LanguageSet {
  const latin = [...enabled].filter((l) => LANGUAGES[l].script === "latin");
  if (latin.length < 2) return enabled;
  const index = functionWords(enabled);
  const counts = new Map<StemLanguage, number>();
  let seen = 0;
  for (const [word] of text.toLowerCase().matchAll(WORD)) {
    if (++seen > 400) break;
    const languages = index.get(word);
    if (languages) for (const l of languages) counts.set(l, (counts.get(l) ?? 0) + 1 / languages.length);
  }
  const ranked = [...counts].sort((a, b) => b[1] - a[1]);
  const [best, second] = ranked;
  if (best === undefined || (second !== undefined && best[1] < 2 * second[1])) return enabled;
  return new Set([...enabled].filter((l) => LANGUAGES[l].script !== "latin" || l === best[0]));
}

/** Recent stems by language set and word: query words repeat, and stemming a word in nine languages is not free. */
const stemCache = new Map<string, Map<string, string[]>>();
const setKeys = new WeakMap<LanguageSet, string>();
const STEM_CACHE_SIZE = 20_000;

/** The stems of a lower-case `word` in those of `languages` that stem its script, distinct. */
export function stemsOf(word: string, languages: LanguageSet): string[] {
  let key = setKeys.get(languages);
  if (key === undefined) {
    key = [...languages].sort().join(",");
    setKeys.set(languages, key);
  }
  let cache = stemCache.get(key);
  if (cache === undefined) {
    cache = new Map();
    stemCache.set(key, cache);
  }
  const hit = cache.get(word);
  if (hit !== undefined) return hit;
  const stems = computeStems(word, languages);
  if (cache.size >= STEM_CACHE_SIZE) cache.clear();
  cache.set(word, stems);
  return stems;
}

function computeStems(word: string, languages: LanguageSet): string[] {
  const script = scriptOf(word);
  const out: string[] = [];
  if (script === undefined) return out;
  for (const language of languages) {
    const info: LanguageInfo = LANGUAGES[language];
    if (info.script !== script) continue;
    const stem = info.stem(word);
    if (stem !== "" && !out.includes(stem)) out.push(stem);
  }
  return out;
}
