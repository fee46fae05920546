import { readFileSync } from "node:fs";
import { join } from "node:path";
import { OpenRathError } from "@openrath/core";
import { describe, expect, it } from "vitest";
import {
  type Bm25Memory,
  type Bm25MemoryOptions,
  type Bm25MemoryWarning,
  bm25Memory,
} from "./bm25-memory.js";
import { letterEmbed } from "./internal/letter-embed.test-helper.js";
import { decodeSnapshot } from "./internal/snapshot-format.js";
import { readPackedIndex } from "./internal/snapshot-layout.js";
import { tempStores } from "./testing/temp-stores.js";

const stores = tempStores("openrath-bm25-vector-");

const tempDir = () => stores.dir();

async function store(options: Bm25MemoryOptions, path?: string): Promise<Bm25Memory> {
  const memory = await bm25Memory({ ...options }).open(path === undefined ? undefined : { path });
  stores.track(memory);
  return memory;
}

/** Counts embed calls and the texts they carried. */
function counting(): { calls: string[][]; embed: (texts: string[]) => Promise<number[][]> } {
  const calls: string[][] = [];
  return {
    calls,
    embed: async (texts) => {
      calls.push(texts);
      return letterEmbed(texts);
    },
  };
}

const ENTRIES = ["listen to the radio", "stone age tools", "the night sky", "a gentleman"];

describe("vector and hybrid recall", () => {
  it("claims vectorSearch exactly when embed is given", () => {
    expect(bm25Memory().capabilities).toEqual({
      vectorSearch: false,
      persistence: true,
      sharedWriters: true,
    });
    expect(bm25Memory({ embed: letterEmbed }).capabilities.vectorSearch).toBe(true);
  });

  it("vector mode ranks by cosine similarity and finds a text sharing no word with the query", async () => {
    const memory = await store({ embed: letterEmbed, search: "vector", minSimilarity: 0.9 });
    await memory.remember(ENTRIES.map((text) => ({ text })));
    const hits = await memory.recall("elegant man");
    expect(hits.map((h) => h.entry.text)).toEqual(["a gentleman"]);
    expect(hits[0]!.score).toBeCloseTo(1, 5);
    const [best] = await memory.recall("silent otter", { topK: 1 });
    expect(best!.score).toBeGreaterThan(0);
    expect(best!.score).toBeLessThanOrEqual(1);
  });

  it("vector mode applies minSimilarity and never returns a score <= 0", async () => {
    const memory = await store({ embed: letterEmbed, search: "vector", minSimilarity: 0.999 });
    await memory.remember(ENTRIES.map((text) => ({ text })));
    expect(await memory.recall("zzz")).toEqual([]);
  });

  it("hybrid mode combines both sides: a full-text match plus a close vector wins", async () => {
    const memory = await store({ embed: letterEmbed, minSimilarity: 0.9 });
    await memory.remember(ENTRIES.map((text) => ({ text })));
    const hits = await memory.recall("night elegant man", { topK: 10 });
    expect(hits.map((h) => h.entry.text).sort()).toEqual(["a gentleman", "the night sky"]);
    for (const hit of hits) {
      expect(hit.score).toBeGreaterThan(0);
      expect(hit.score).toBeLessThanOrEqual(1);
    }
  });

  it("hybrid weights change the ranking", async () => {
    const texts = ["the night sky", "a gentleman"];
    const textHeavy = await store({
      embed: letterEmbed,
      minSimilarity: 0.5,
      hybridWeights: { text: 10, vector: 0.1 },
    });
    const vectorHeavy = await store({
      embed: letterEmbed,
      minSimilarity: 0.5,
      hybridWeights: { text: 0.1, vector: 10 },
    });
    for (const memory of [textHeavy, vectorHeavy]) await memory.remember(texts.map((text) => ({ text })));
    // "night" matches the sky by its word; "gent lemans" has the gentleman's letters.
    const query = "night gent lemans";
    expect((await textHeavy.recall(query))[0]!.entry.text).toBe("the night sky");
    expect((await vectorHeavy.recall(query))[0]!.entry.text).toBe("a gentleman");
  });

  it("hybrid mode respects scopes on the vector side too", async () => {
    const memory = await store({ embed: letterEmbed, minSimilarity: 0.9 });
    await memory.remember({ text: "a gentleman", scope: { tenant: "other" } });
    expect(await memory.recall("elegant man", { scope: { tenant: "default" } })).toEqual([]);
    expect(await memory.recall("elegant man", { scope: { tenant: "other", user: "x" } })).toHaveLength(1);
  });

  it("embeds in batches of embedBatchSize", async () => {
    const { calls, embed } = counting();
    const memory = await store({ embed, embedBatchSize: 2 });
    await memory.remember(["a", "b", "c", "d", "e"].map((text) => ({ text: `${text} item` })));
    expect(calls.map((c) => c.length)).toEqual([2, 2, 1]);
  });

  it("hybrid recall falls back to full text with a warning when embed fails; vector recall rejects", async () => {
    let fail = false;
    const warnings: Bm25MemoryWarning[] = [];
    const embed = async (texts: string[]) => {
      if (fail) throw new Error("embedding service down");
      return letterEmbed(texts);
    };
    const hybrid = await store({ embed, onWarning: (w) => warnings.push(w) });
    const vector = await store({ embed, search: "vector" });
    for (const memory of [hybrid, vector]) await memory.remember({ text: "the night sky" });
    fail = true;
    expect((await hybrid.recall("night")).map((h) => h.entry.text)).toEqual(["the night sky"]);
    expect(warnings.map((w) => w.code)).toEqual(["embed_failed"]);
    await expect(vector.recall("night")).rejects.toMatchObject({ code: "memory_unavailable" });
    await expect(hybrid.remember({ text: "not stored" })).rejects.toMatchObject({
      code: "memory_unavailable",
      message: expect.stringContaining("embedding service down"),
    });
  });

  it("rejects malformed embeddings with invalid_argument", async () => {
    const bad: Record<string, (texts: string[]) => Promise<number[][]>> = {
      "too few vectors": async () => [],
      "a NaN": async (texts) => texts.map(() => [Number.NaN, 1]),
      "an empty vector": async (texts) => texts.map(() => []),
      "two sizes": async (texts) => texts.map((_, i) => (i === 0 ? [1, 2] : [1, 2, 3])),
    };
    for (const [name, embed] of Object.entries(bad)) {
      const memory = await store({ embed });
      const error = await memory.remember([{ text: "one" }, { text: "two" }]).catch((e: unknown) => e);
      expect(OpenRathError.isInstance(error, "invalid_argument"), name).toBe(true);
      expect(await memory.recall("one", { topK: 10 }).catch(() => []), name).toEqual([]);
    }
  });

  it("persists vectors and does not embed stored entries again on reopen", async () => {
    const dir = tempDir();
    const first = counting();
    const a = await store({ embed: first.embed, search: "vector", minSimilarity: 0.9 }, dir);
    await a.remember(ENTRIES.map((text) => ({ text })));
    await a.close();
    expect(decodeSnapshot(readFileSync(join(dir, "memory.json"))).header.dimensions).toBe(26);

    const second = counting();
    const b = await store({ embed: second.embed, search: "vector", minSimilarity: 0.9 }, dir);
    expect((await b.recall("elegant man")).map((h) => h.entry.text)).toEqual(["a gentleman"]);
    expect(second.calls).toEqual([["elegant man"]]);
  });

  it("the vectors of recalled entries are kept: saved again after a vector and a hybrid recall", async () => {
    const dir = tempDir();
    const warnings: Bm25MemoryWarning[] = [];
    const onWarning = (w: Bm25MemoryWarning) => warnings.push(w);
    const a = await store({ embed: letterEmbed, search: "vector", minSimilarity: 0.1, onWarning }, dir);
    await a.remember(ENTRIES.map((text) => ({ text })));
    expect(await a.recall("elegant man", { topK: 10 })).toHaveLength(ENTRIES.length);
    await a.close();
    const saved = readPackedIndex(decodeSnapshot(readFileSync(join(dir, "memory.json")))).vectors;
    expect(saved?.length).toBe(ENTRIES.length * 26);
    expect(saved?.every(Number.isFinite)).toBe(true);
    const b = await store({ embed: letterEmbed, search: "hybrid", minSimilarity: 0.1, onWarning }, dir);
    expect(await b.recall("the night radio", { topK: 10 })).not.toHaveLength(0);
    await b.remember({ text: "one more, so that closing compacts" });
    await b.close();
    expect(warnings).toEqual([]);

    const again = counting();
    const c = await store({ embed: again.embed, search: "vector", minSimilarity: 0.9 }, dir);
    expect(again.calls).toEqual([]);
    expect((await c.recall("elegant man")).map((h) => h.entry.text)).toEqual(["a gentleman"]);
    expect(again.calls).toEqual([["elegant man"]]);
  });

  it("entries stored without embed are embedded when the store is next opened with embed", async () => {
    const dir = tempDir();
    const plain = await store({}, dir);
    await plain.remember(ENTRIES.map((text) => ({ text })));
    await plain.close();
    const { calls, embed } = counting();
    const memory = await store({ embed, search: "vector", minSimilarity: 0.9 }, dir);
    expect(calls.flat().sort()).toEqual([...ENTRIES].sort());
    expect((await memory.recall("elegant man")).map((h) => h.entry.text)).toEqual(["a gentleman"]);
  });

  it("a new embedModel, or a new vector size, embeds every entry again", async () => {
    const dir = tempDir();
    const a = await store({ embed: letterEmbed, embedModel: "letters-v1" }, dir);
    await a.remember(ENTRIES.map((text) => ({ text })));
    await a.close();

    const renamed = counting();
    const warnings: Bm25MemoryWarning[] = [];
    const b = await store(
      { embed: renamed.embed, embedModel: "letters-v2", onWarning: (w) => warnings.push(w) },
      dir,
    );
    expect(renamed.calls.flat().sort()).toEqual([...ENTRIES].sort());
    expect(warnings.map((w) => w.code)).toContain("reindexed");
    await b.close();

    const wider = async (texts: string[]) => (await letterEmbed(texts)).map((v) => [...v, 1]);
    const c = await store({ embed: wider, search: "vector", minSimilarity: 0.9, onWarning: () => {} }, dir);
    expect((await c.recall("elegant man")).map((h) => h.entry.text)).toEqual(["a gentleman"]);
    await c.close();
    expect(decodeSnapshot(readFileSync(join(dir, "memory.json"))).header.dimensions).toBe(27);
  });
});
