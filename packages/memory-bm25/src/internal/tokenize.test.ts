import { describe, expect, it } from "vitest";
import { normalizeText, tokenize } from "./tokenize.js";

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
      "t",
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
});
