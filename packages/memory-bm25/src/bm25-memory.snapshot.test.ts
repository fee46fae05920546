import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { OpenRathError } from "@openrath/core";
import { describe, expect, it } from "vitest";
import {
  type Bm25Memory,
  type Bm25MemoryOptions,
  type Bm25MemoryWarning,
  bm25Memory,
} from "./bm25-memory.js";
import { replaceInFile, rewriteSnapshot } from "./internal/snapshot.test-helper.js";
import { decodeSnapshot } from "./internal/snapshot-format.js";
import { readPackedIndex, snapshotSections } from "./internal/snapshot-layout.js";
import { tempStores } from "./testing/temp-stores.js";

const planner = { tenant: "acme", user: "ann", agent: "planner" };
const stores = tempStores("openrath-bm25-snapshot-");

function dirWith(snapshot?: string): string {
  const dir = stores.dir();
  if (snapshot !== undefined) writeFileSync(join(dir, "memory.json"), snapshot);
  return dir;
}

async function openAt(
  path: string | undefined,
  options: Bm25MemoryOptions = {},
): Promise<{ memory: Bm25Memory; warnings: Bm25MemoryWarning[] }> {
  const warnings: Bm25MemoryWarning[] = [];
  const memory = await bm25Memory({
    onWarning: (w) => warnings.push(w),
    ...options,
  }).open(path === undefined ? { scope: planner } : { path, scope: planner });
  stores.track(memory);
  return { memory, warnings };
}

async function rejection(promise: Promise<unknown>): Promise<OpenRathError> {
  try {
    await promise;
  } catch (error) {
    if (OpenRathError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a rejection");
}

function header(file: string) {
  return decodeSnapshot(readFileSync(file)).header;
}

describe("snapshot format", () => {
  it("writes version 4 with the change-log generation that follows it", async () => {
    const dir = dirWith();
    const memory = (await openAt(dir)).memory;
    await memory.remember({ text: "the boiler is in the cellar" });
    await memory.close();
    const h = header(join(dir, "memory.json"));
    expect(h).toMatchObject({ format: "openrath.memory-bm25", version: 4, count: 1, log: 2 });
  });

  it("keeps entry texts, ids and metadata as bytes in the file, read back exactly (any script, any size)", async () => {
    const dir = dirWith();
    const memory = (await openAt(dir)).memory;
    const texts = [
      "the boiler is in the cellar",
      "我喜欢喝咖啡，尤其是早上",
      "𝒳 mathematical script and emoji 🚀 with é and ß",
      "long ".repeat(5000),
    ];
    const stored = await memory.remember(
      texts.map((text, i) => ({
        id: `entry-${i}-é`,
        text,
        ...(i % 2 === 0 ? { metadata: { n: i, tags: ["a", "b"] }, source: `web:site-${i}` } : {}),
      })),
    );
    await memory.close();
    const { index } = readPackedIndex(decodeSnapshot(readFileSync(join(dir, "memory.json"))));
    expect(index.docs.texts.all()).toEqual(texts);
    expect(index.docs.scopes).toEqual(["acme/ann/planner"]);
    const again = (await openAt(dir)).memory;
    for (const entry of stored) {
      const hits = await again.recall(entry.text.slice(0, 20), { topK: 10 });
      expect(hits.map((h) => h.entry)).toContainEqual(entry);
    }
  });

  it("a version 3 snapshot (one JSON object, written by unreleased builds) is memory_unsupported_version", async () => {
    const dir = dirWith(
      `${JSON.stringify({
        format: "openrath.memory-bm25",
        version: 3,
        savedAt: 1,
        tokenizer: "openrath-unicode-2",
        dimensions: null,
        embedModel: null,
        count: 1,
        log: 1,
        sha256: "0".repeat(64),
        body: { docs: [{ id: "x", text: "old entry", scope: "default", createdAt: 1 }], postings: "" },
      })}\n`,
    );
    const error = await rejection(openAt(dir));
    expect(error.code).toBe("memory_unsupported_version");
    expect(error.message).toMatch(/format version 3.*unreleased/);
  });

  it("refuses versions 1 to 3 (only unreleased builds wrote them) and newer versions with memory_unsupported_version", async () => {
    for (const [version, pattern] of [
      [1, /unreleased/],
      [2, /unreleased/],
      [3, /unreleased/],
      [5, /newer.*upgrade/],
    ] as const) {
      const dir = dirWith();
      const memory = (await openAt(dir)).memory;
      await memory.remember({ text: "versioned entry" });
      await memory.close();
      const file = join(dir, "memory.json");
      replaceInFile(file, '"version":4', `"version":${version}`);
      const error = await rejection(openAt(dir));
      expect(error.code, `version ${version}`).toBe("memory_unsupported_version");
      expect(error.message).toMatch(pattern);
    }
  });

  it("a snapshot whose postings name a missing entry is corrupt", async () => {
    const dir = dirWith();
    const memory = (await openAt(dir)).memory;
    await memory.remember({ text: "boiler" });
    await memory.close();
    const file = join(dir, "memory.json");
    // Entry number 1 of 1 entry (0 is the only one): the posting byte is 2 × (1 − (−1)) = 4.
    rewriteSnapshot(file, (fields, sections) => {
      const { index } = readPackedIndex(decodeSnapshot(readFileSync(file)));
      const broken = {
        ...index,
        terms: ["boiler"],
        counts: Uint32Array.of(1),
        sizes: Uint32Array.of(1),
        postings: Uint8Array.of(4),
      };
      const rewritten = new Map(sections);
      for (const [name, data] of snapshotSections(broken, undefined)) {
        rewritten.set(name, Buffer.concat(data instanceof Uint8Array ? [data] : [...data]));
      }
      return { fields: { ...fields, terms: 1 }, sections: rewritten };
    });
    const reopened = await openAt(dir).catch((error: unknown) => error);
    // The postings are checked when first used; the checksum matches, so opening succeeds and the
    // first query that needs the broken posting reports it.
    if (OpenRathError.isInstance(reopened)) {
      expect(reopened.code).toBe("memory_corrupt");
      return;
    }
    const error = await (reopened as { memory: Bm25Memory }).memory.recall("boiler").catch((e: unknown) => e);
    expect(OpenRathError.isInstance(error, "memory_corrupt")).toBe(true);
    expect((error as Error).message).toMatch(/names an entry that does not exist/);
  });
});

describe("compaction of a reopened store", () => {
  const words = ["amber", "basil", "cedar", "delta", "ember", "fjord", "garnet", "harbor"];
  const text = (i: number) =>
    `${words[i % 8]} ${words[(i * 3) % 8]} note ${i} ${i % 5 === 0 ? "ferry" : "tram"}`;
  const queries = [...words, "ferry", "tram", "note", "quartz", "zephyr", "amber ferry", "quartz tram"];

  async function ranked(memory: Bm25Memory): Promise<string[]> {
    const out: string[] = [];
    for (const q of queries) {
      const hits = await memory.recall(q, { topK: 50 });
      out.push(`${q}: ${hits.map((h) => `${h.entry.id}=${h.score.toFixed(9)}`).join(" ")}`);
    }
    return out;
  }

  it("ranks as a store that never left memory, after removals, replacements and new terms (each compaction path)", async () => {
    for (const removeLoaded of [false, true]) {
      const dir = dirWith();
      const reference = (await openAt(undefined)).memory;
      const both = async (fn: (m: Bm25Memory) => Promise<unknown>, disk: Bm25Memory) => {
        await fn(reference);
        await fn(disk);
      };
      let disk = (await openAt(dir)).memory;
      await both(
        (m) => m.remember(Array.from({ length: 60 }, (_, i) => ({ id: `e${i}`, text: text(i) }))),
        disk,
      );
      await disk.close();
      // Reopened: its entries and postings are the snapshot's, packed.
      disk = (await openAt(dir)).memory;
      if (removeLoaded) {
        await both((m) => m.forget({ ids: ["e3", "e17", "e40"] }), disk);
        await both((m) => m.remember({ id: "e20", text: "quartz replaces entry twenty" }), disk);
      }
      await both(
        (m) =>
          m.remember([
            { id: "n1", text: "zephyr quartz tram" },
            { id: "n2", text: "amber zephyr" },
          ]),
        disk,
      );
      await disk.flush();
      await disk.close();
      const reopened = (await openAt(dir)).memory;
      expect(await ranked(reopened), `removeLoaded ${removeLoaded}`).toEqual(await ranked(reference));
      const { index } = readPackedIndex(decodeSnapshot(readFileSync(join(dir, "memory.json"))));
      expect(index.docs.count).toBe(removeLoaded ? 59 : 62);
      expect([...index.terms]).toEqual([...index.terms].sort());
    }
  });
});

describe("scope filtering", () => {
  it("a scope with few of the entries gets exactly its own best topK, however the others score", async () => {
    for (const [mine, others] of [
      [12, 150], // over 1 in 8 visible: the postings are walked, invisible entries skipped
      [3, 200], // under 1 in 8: only the visible entries are scored
    ] as const) {
      const { memory } = await openAt(undefined);
      await memory.remember(
        Array.from({ length: others }, (_, i) => ({
          text: `ferry ferry ferry ${i}`,
          scope: { tenant: "acme", user: "zed" },
        })),
      );
      await memory.remember(
        Array.from({ length: mine }, (_, i) => ({ id: `mine-${i}`, text: `a slow ferry ${i}` })),
      );
      const hits = await memory.recall("ferry", { topK: 10 });
      expect(hits).toHaveLength(Math.min(10, mine));
      expect(hits.every((h) => h.entry.id.startsWith("mine-"))).toBe(true);
      await memory.close();
    }
  });

  it('a token that is also an Object property ("constructor") is recalled like any other', async () => {
    const { memory } = await openAt(undefined);
    await memory.remember([{ text: "the constructor of the bridge" }, { text: "constructor constructor" }]);
    const hits = await memory.recall("constructor");
    expect(hits.map((h) => h.entry.text)).toEqual([
      "constructor constructor",
      "the constructor of the bridge",
    ]);
  });
});
