import type { MemoryHit } from "@openrath/core";
import { describe, expect, it } from "vitest";
import { type Bm25MemoryOptions, bm25Memory } from "./bm25-memory.js";

const scope = { tenant: "acme" };

async function ranking(options: Bm25MemoryOptions, texts: string[], query: string): Promise<MemoryHit[]> {
  const memory = await bm25Memory(options).open({ scope });
  try {
    await memory.remember(texts.map((text) => ({ text })));
    return await memory.recall(query, { topK: 10 });
  } finally {
    await memory.close();
  }
}

const order = (hits: MemoryHit[]) => hits.map((hit) => hit.entry.text);

describe("BM25 ranking", () => {
  it("k1 changes the ranking: low k1 saturates term frequency, high k1 rewards repeats", async () => {
    const texts = ["apple apple apple apple pie crust", "apple pie", "kiwi tart", "plum jam"];
    const saturated = await ranking({ k1: 0.01, b: 0 }, texts, "apple");
    const linear = await ranking({ k1: 5, b: 0 }, texts, "apple");
    // Saturated, four repeats count (almost) as one: the two scores are within 1%.
    expect(saturated[0]!.score / saturated[1]!.score).toBeLessThan(1.01);
    expect(order(linear)[0]).toBe("apple apple apple apple pie crust");
    expect(linear[0]!.score / linear[1]!.score).toBeGreaterThan(1.5);
  });

  it("b changes the ranking: b = 0 ignores length, b = 1 normalizes by it", async () => {
    const long = `zebra zebra ${"grass ".repeat(30)}`.trim();
    const texts = [long, "zebra crossing", "lion pride", "hippo pool"];
    const noLength = await ranking({ b: 0 }, texts, "zebra");
    const fullLength = await ranking({ b: 1 }, texts, "zebra");
    expect(order(noLength)[0]).toBe(long);
    expect(order(fullLength)[0]).toBe("zebra crossing");
  });

  it("scores stay positive when texts repeat a word (document frequency counts each entry once)", async () => {
    const hits = await ranking({}, ["tea tea tea tea", "tea tea", "green tea", "coffee"], "tea");
    expect(hits).toHaveLength(3);
    // Counting every occurrence (Orama's default) would give tea a document frequency of 7 in 4
    // entries and a negative IDF.
    for (const hit of hits) expect(hit.score).toBeGreaterThan(0);
  });

  it("a query word also matches words it is a prefix of, ranked below the word itself; prefix: false turns that off", async () => {
    const texts = ["category theory", "a cat on the mat", "dog days"];
    expect(order(await ranking({}, texts, "cat"))).toEqual(["a cat on the mat", "category theory"]);
    expect(order(await ranking({ prefix: false }, texts, "cat"))).toEqual(["a cat on the mat"]);
  });

  it("a misspelt word finds the word a typo away; fuzzy: false turns that off", async () => {
    const texts = ["the calendar for March", "a colander in the kitchen", "dog days"];
    expect(order(await ranking({}, texts, "calender"))[0]).toBe("the calendar for March");
    expect(order(await ranking({}, texts, "kitcehn"))).toEqual(["a colander in the kitchen"]);
    expect(await ranking({ fuzzy: false }, texts, "kitcehn")).toEqual([]);
  });

  it("other forms of a word match through stemming; stemming: false turns that off", async () => {
    const texts = ["The spare battery is in the drawer", "Les réunions du lundi", "dog days"];
    expect(order(await ranking({}, texts, "batteries"))).toEqual(["The spare battery is in the drawer"]);
    expect(order(await ranking({}, texts, "réunion"))).toEqual(["Les réunions du lundi"]);
    expect(await ranking({ stemming: false, prefix: false, fuzzy: false }, texts, "batteries")).toEqual([]);
  });

  it("identifier parts match: user name finds getUserName; identifiers: false turns that off", async () => {
    const texts = ["call getUserName() before rendering", "the user picks a name later", "dog days"];
    expect(order(await ranking({}, texts, "getUserName"))[0]).toBe("call getUserName() before rendering");
    expect(order(await ranking({}, texts, "user name"))).toContain("call getUserName() before rendering");
    const off = await ranking({ identifiers: false, prefix: false, fuzzy: false }, texts, "user name");
    expect(order(off)).toEqual(["the user picks a name later"]);
  });

  it("a CJK entry is not pushed down by its n-grams: length counts words (lengthUnit)", async () => {
    const texts = [
      "東京タワーは赤くて高い観光名所です",
      "Tokyo tower 東京 tower tower tower tower tower tower tower",
    ];
    const words = await ranking({}, texts, "東京");
    const terms = await ranking({ lengthUnit: "terms" }, texts, "東京");
    const japaneseScore = (hits: MemoryHit[]) =>
      hits.find((h) => h.entry.text.startsWith("東京タワー"))!.score;
    const otherScore = (hits: MemoryHit[]) => hits.find((h) => h.entry.text.startsWith("Tokyo"))!.score;
    expect(japaneseScore(words) / otherScore(words)).toBeGreaterThan(
      japaneseScore(terms) / otherScore(terms),
    );
    expect(order(words)[0]).toBe("東京タワーは赤くて高い観光名所です");
  });

  it("never returns a zero-score hit: a query without indexable tokens finds nothing", async () => {
    expect(await ranking({}, ["anything at all"], "?!")).toEqual([]);
    expect(await ranking({}, ["anything at all"], "nothing")).toEqual([]);
  });

  it("stop words are neither indexed nor searched", async () => {
    const hits = await ranking({ stopWords: ["the"] }, ["the cat", "the dog"], "the");
    expect(hits).toEqual([]);
    const found = await ranking({ stopWords: ["The"] }, ["the cat", "the dog"], "the dog");
    expect(order(found)).toEqual(["the dog"]);
  });

  it("finds accented text without accents and the reverse", async () => {
    expect(order(await ranking({}, ["Meet at the café", "Meet at the bar"], "cafe"))).toEqual([
      "Meet at the café",
    ]);
    expect(order(await ranking({}, ["resume writing tips"], "résumé"))).toEqual(["resume writing tips"]);
  });

  it("finds a CJK word inside a longer run whatever the segmenter made of it", async () => {
    const texts = ["我喜欢喝咖啡和茶叶", "今天天气很好", "東京タワーに行きました"];
    expect(order(await ranking({}, texts, "咖啡"))[0]).toBe("我喜欢喝咖啡和茶叶");
    expect(order(await ranking({}, texts, "茶"))[0]).toBe("我喜欢喝咖啡和茶叶");
    expect(order(await ranking({}, texts, "タワー"))[0]).toBe("東京タワーに行きました");
  });
});
