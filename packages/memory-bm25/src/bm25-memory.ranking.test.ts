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
    const saturated = await ranking({ k1: 0.01 }, texts, "apple");
    const linear = await ranking({ k1: 5 }, texts, "apple");
    expect(order(saturated)[0]).toBe("apple pie");
    expect(order(linear)[0]).toBe("apple apple apple apple pie crust");
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

  it("matches whole tokens only: a query word does not match words it is a prefix of", async () => {
    const hits = await ranking({}, ["category theory", "a cat on the mat"], "cat");
    expect(order(hits)).toEqual(["a cat on the mat"]);
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
