import { describe, expect, it } from "vitest";
import { DEFAULT_STEM_LANGUAGES } from "./language.js";
import { type AnalyzerSettings, analyze, analyzeQuery, normalizeText } from "./tokenize.js";

/** Words and their parts only: no stemming, no case splitting. */
const PLAIN: AnalyzerSettings = {
  stemming: new Set(),
  identifiers: false,
  lengthUnit: "words",
  stopWords: new Set(),
};
const FULL: AnalyzerSettings = { ...PLAIN, stemming: new Set(DEFAULT_STEM_LANGUAGES), identifiers: true };

function tokenize(text: string, mode: "index" | "query", stopWords?: ReadonlySet<string>): string[] {
  const settings = stopWords ? { ...PLAIN, stopWords } : PLAIN;
  return mode === "index" ? analyze(text, settings).terms : analyzeQuery(text, settings).map((t) => t.term);
}

describe("normalizeText", () => {
  it("lower-cases, applies NFKC and strips Latin, Greek and Cyrillic diacritics", () => {
    expect(normalizeText("Café NAÏVE Ångström")).toBe("cafe naive angstrom");
    expect(normalizeText("ＡＢＣ ﬁne ①")).toBe("abc fine 1");
    expect(normalizeText("Καλημέρα")).toBe("καλημερα");
    expect(normalizeText("Ёжик")).toBe("ежик");
  });

  it("folds German sharp s, Greek final sigma, dotted capital I and typographic apostrophes", () => {
    expect(normalizeText("Straße")).toBe("strasse");
    expect(normalizeText("λόγος")).toBe("λογοσ");
    expect(normalizeText("İstanbul")).toBe("istanbul");
    expect(normalizeText("don’t")).toBe("don't");
  });

  it("keeps marks that are letters of other scripts, and recomposes Hangul and kana", () => {
    expect(normalizeText("नमस्ते")).toBe("नमस्ते");
    expect(normalizeText("가방")).toBe("가방");
    expect(normalizeText("がぎ")).toBe("がぎ");
  });
});

describe("tokenize", () => {
  it("splits Latin, Cyrillic and Greek text into words", () => {
    expect(tokenize("The quick brown fox", "index")).toEqual(["the", "quick", "brown", "fox"]);
    expect(tokenize("Привет, мир!", "index")).toEqual(["привет", "мир"]);
    expect(tokenize("Καλημέρα κόσμε", "index")).toEqual(["καλημερα", "κοσμε"]);
  });

  it("makes accented and unaccented spellings the same token", () => {
    expect(tokenize("café", "query")).toEqual(tokenize("cafe", "query"));
    expect(tokenize("CAFÉ", "index")).toEqual(["cafe"]);
  });

  it("drops punctuation and symbols, keeping words with inner punctuation whole and in parts", () => {
    expect(tokenize("Hello, world... (really?!) — yes; $5 & 10%", "index")).toEqual([
      "hello",
      "world",
      "really",
      "yes",
      "5",
      "10",
    ]);
    expect(tokenize("example.com foo_bar don't 3.14", "index")).toEqual([
      "example.com",
      "example",
      "com",
      "foo_bar",
      "foo",
      "bar",
      "don't",
      "don",
      "3.14",
      "3",
      "14",
    ]);
    expect(tokenize("e-mail", "index")).toEqual(["e", "mail"]);
    expect(tokenize("... !!! ---", "query")).toEqual([]);
  });

  it("indexes CJK runs as words of three or more characters, unigrams and bigrams", () => {
    expect(tokenize("北京大学", "index")).toEqual(["北", "京", "大", "学", "北京", "京大", "大学"]);
    const japanese = tokenize("東京タワー", "index");
    expect(japanese).toContain("東京タワー");
    expect(japanese).toEqual(expect.arrayContaining(["東京", "京タ", "タワ", "ワー", "東", "ー"]));
  });

  it("queries a CJK run of several characters by its bigrams and a single character by itself", () => {
    expect(tokenize("北京", "query")).toEqual(["北京"]);
    expect(tokenize("咖啡店", "query")).toEqual(expect.arrayContaining(["咖啡", "啡店"]));
    expect(tokenize("咖啡店", "query")).not.toContain("咖");
    expect(tokenize("茶", "query")).toEqual(["茶"]);
    // A query word inside a longer run matches: its bigrams are among the run's.
    const text = new Set(tokenize("我喜欢喝咖啡和茶叶", "index"));
    for (const token of tokenize("咖啡", "query")) expect(text.has(token)).toBe(true);
    for (const token of tokenize("茶", "query")) expect(text.has(token)).toBe(true);
  });

  it("splits Korean at spaces and adds Hangul bigrams, so a stem matches a word with a particle", () => {
    const text = new Set(tokenize("커피를 좋아해요", "index"));
    for (const token of tokenize("커피", "query")) expect(text.has(token)).toBe(true);
  });

  it("keeps emoji as tokens, without presentation selectors or skin tones", () => {
    expect(tokenize("🍕 is great 👍🏽 ❤️", "index")).toEqual(["🍕", "is", "great", "👍", "❤"]);
    expect(tokenize("👍", "query")).toEqual(tokenize("👍🏿", "query"));
    expect(tokenize("👨‍👩‍👧 🇫🇷", "index")).toEqual(["👨‍👩‍👧", "🇫🇷"]);
  });

  it("repeats tokens when indexing (term frequency) and lists each once in a query", () => {
    expect(tokenize("tea and tea and tea", "index")).toEqual(["tea", "and", "tea", "and", "tea"]);
    expect(tokenize("tea and tea and tea", "query")).toEqual(["tea", "and"]);
  });

  it("drops stop words only when given", () => {
    expect(tokenize("the cat", "index")).toEqual(["the", "cat"]);
    expect(tokenize("the cat", "index", new Set(["the"]))).toEqual(["cat"]);
  });

  it("tokenizes a long text in linear time and the same as its words one by one", () => {
    const words = Array.from({ length: 40_000 }, (_, i) => `word${i % 997}`);
    const text = words.join(" ");
    const started = performance.now();
    const tokens = tokenize(text, "index");
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(tokens).toEqual(words);
    const chinese = "我喜欢喝咖啡".repeat(500);
    expect(tokenize(chinese, "index").filter((t) => t === "咖啡")).toHaveLength(500);
  });

  it("indexes a CJK text of 200,000 characters without overflowing the stack", () => {
    const text = "我喜欢喝咖啡和茶叶".repeat(22_300);
    const { terms, length } = analyze(text, FULL);
    expect(terms.length).toBeGreaterThan(400_000);
    expect(length).toBeGreaterThan(0);
    expect(analyzeQuery(text.slice(0, 50_000), FULL).length).toBeGreaterThan(0);
  });
});

describe("analyze: stems, identifiers and lengths", () => {
  it("adds stems in the entry's language as extra terms and counts words, not terms", () => {
    const english = analyze("The batteries of the drones were charged", FULL);
    expect(english.terms).toEqual(
      expect.arrayContaining(["batteries", "batteri", "drones", "drone", "charged", "charg"]),
    );
    expect(english.length).toBe(7);
    const french = analyze("Les réunions de la semaine sont annulées", FULL);
    expect(french.terms).toEqual(expect.arrayContaining(["reunions", "reunion"]));
    expect(analyze("Встречи перенесены на пятницу", FULL).terms).toEqual(
      expect.arrayContaining(["встречи", "встреч"]),
    );
  });

  it("stems a query word in every enabled language of its script", () => {
    const [term] = analyzeQuery("réunions", FULL);
    expect(term!.term).toBe("reunions");
    expect(term!.stems).toContain("reunion");
    expect(analyzeQuery("42", FULL)[0]!.expandable).toBe(false);
  });

  it("splits identifiers at case changes and letter-digit boundaries, and paths at separators", () => {
    expect(analyze("getUserName", FULL).terms).toEqual(
      expect.arrayContaining(["getusername", "get", "user", "name"]),
    );
    expect(analyze("XMLHttpRequest", FULL).terms).toEqual(
      expect.arrayContaining(["xmlhttprequest", "xml", "http", "request"]),
    );
    expect(analyze("max_retry_count", FULL).terms).toEqual(
      expect.arrayContaining(["max_retry_count", "max", "retry", "count"]),
    );
    expect(analyze("src/memory/bm25-store.ts", FULL).terms).toEqual(
      expect.arrayContaining(["src", "memory", "bm25", "store.ts", "store", "ts"]),
    );
    expect(analyze("utf8", FULL).terms).toEqual(expect.arrayContaining(["utf8", "utf", "8"]));
    expect(analyze("getUserName", { ...FULL, identifiers: false }).terms).not.toContain("user");
    expect(analyze("getUserName", FULL).length).toBe(1);
  });

  it("counts a CJK entry's length in words, not in its unigrams and bigrams (unless asked to)", () => {
    const japanese = analyze("東京タワーは赤い", FULL);
    expect(japanese.terms.length).toBeGreaterThan(10);
    expect(japanese.length).toBeLessThan(6);
    expect(analyze("東京タワーは赤い", { ...FULL, lengthUnit: "terms" }).length).toBe(japanese.terms.length);
  });
});
