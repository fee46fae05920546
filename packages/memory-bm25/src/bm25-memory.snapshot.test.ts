import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OpenRathError } from "@openrath/core";
import { afterEach, describe, expect, it } from "vitest";
import {
  type Bm25Memory,
  type Bm25MemoryOptions,
  type Bm25MemoryWarning,
  bm25Memory,
} from "./bm25-memory.js";
import { letterEmbed } from "./internal/letter-embed.test-helper.js";
import { decodeSnapshot, encodeSnapshot } from "./internal/snapshot-file.js";

// Snapshots written by version 0.1.0 (format version 1: Orama's saved database as the body), of
// three entries in three scopes after a fourth was forgotten; the second one with 26-number vectors.
const V1_TEXT =
  '{"format":"openrath.memory-bm25","version":1,"savedAt":1795944955197,"tokenizer":"openrath-unicode-1","dimensions":null,"embedModel":null,"count":3,"sha256":"911b1360dc3cf87deee50712d9308ed4ed37c5fc3e5c7ba2e5ec38c91890fb25","body":{"internalDocumentIDStore":{"internalIdToId":["a","b","c","gone"]},"index":{"indexes":{"text":{"type":"Radix","node":{"w":"","s":"","e":false,"k":"","d":[],"c":[["t",{"w":"t","s":"t","e":false,"k":"t","d":[],"c":[["h",{"w":"the","s":"he","e":true,"k":"h","d":[1],"c":[]}],["i",{"w":"tickets","s":"ickets","e":true,"k":"i","d":[2],"c":[]}]]}],["f",{"w":"f","s":"f","e":false,"k":"f","d":[],"c":[["e",{"w":"ferry","s":"erry","e":true,"k":"e","d":[1,2],"c":[]}],["r",{"w":"from","s":"rom","e":true,"k":"r","d":[1],"c":[]}]]}],["l",{"w":"leaves","s":"leaves","e":true,"k":"l","d":[1],"c":[]}],["p",{"w":"pier","s":"pier","e":true,"k":"p","d":[1],"c":[]}],["4",{"w":"4","s":"4","e":true,"k":"4","d":[1],"c":[]}],["a",{"w":"are","s":"are","e":true,"k":"a","d":[2],"c":[]}],["c",{"w":"cheaper","s":"cheaper","e":true,"k":"c","d":[2],"c":[]}],["o",{"w":"online","s":"online","e":true,"k":"o","d":[2],"c":[]}],["\u6211",{"w":"\u6211","s":"\u6211","e":true,"k":"\u6211","d":[3],"c":[["\u559c",{"w":"\u6211\u559c","s":"\u559c","e":true,"k":"\u559c","d":[3],"c":[]}]]}],["\u559c",{"w":"\u559c","s":"\u559c","e":true,"k":"\u559c","d":[3],"c":[["\u6b22",{"w":"\u559c\u6b22","s":"\u6b22","e":true,"k":"\u6b22","d":[3],"c":[]}]]}],["\u6b22",{"w":"\u6b22","s":"\u6b22","e":true,"k":"\u6b22","d":[3],"c":[["\u559d",{"w":"\u6b22\u559d","s":"\u559d","e":true,"k":"\u559d","d":[3],"c":[]}]]}],["\u559d",{"w":"\u559d","s":"\u559d","e":true,"k":"\u559d","d":[3],"c":[["\u5496",{"w":"\u559d\u5496","s":"\u5496","e":true,"k":"\u5496","d":[3],"c":[]}]]}],["\u5496",{"w":"\u5496","s":"\u5496","e":true,"k":"\u5496","d":[3],"c":[["\u5561",{"w":"\u5496\u5561","s":"\u5561","e":true,"k":"\u5561","d":[3],"c":[]}]]}],["\u5561",{"w":"\u5561","s":"\u5561","e":true,"k":"\u5561","d":[3],"c":[]}],["r",{"w":"removed","s":"removed","e":true,"k":"r","d":[],"c":[]}],["e",{"w":"entry","s":"entry","e":true,"k":"e","d":[],"c":[]}]]},"isArray":false},"scope":{"type":"Flat","node":{"numberToDocumentId":[["acme/ann",[1]],["acme/ann/planner",[2]],["acme/bob",[3]]]},"isArray":false}},"vectorIndexes":{},"searchableProperties":["text","scope"],"searchablePropertiesWithTypes":{"text":"string","scope":"enum"},"frequencies":{"text":{"1":{"4":1,"the":1,"ferry":1,"leaves":1,"from":1,"pier":1},"2":{"ferry":3,"tickets":1,"are":1,"cheaper":1,"online":1},"3":{"\u6211":1,"\u559c":1,"\u6b22":1,"\u559d":1,"\u5496":1,"\u5561":1,"\u6211\u559c":1,"\u559c\u6b22":1,"\u6b22\u559d":1,"\u559d\u5496":1,"\u5496\u5561":1}}},"tokenOccurrences":{"text":{"4":1,"the":1,"ferry":2,"leaves":1,"from":1,"pier":1,"tickets":1,"are":1,"cheaper":1,"online":1,"\u6211":1,"\u559c":1,"\u6b22":1,"\u559d":1,"\u5496":1,"\u5561":1,"\u6211\u559c":1,"\u559c\u6b22":1,"\u6b22\u559d":1,"\u559d\u5496":1,"\u5496\u5561":1}},"avgFieldLength":{"text":8},"fieldLengths":{"text":{"1":6,"2":7,"3":11}}},"docs":{"docs":{"1":{"id":"a","text":"The ferry leaves from pier 4.","scope":"acme/ann","createdAt":1795944955183,"metadata":{"role":"user","tags":["travel"]},"source":"s-1"},"2":{"id":"b","text":"Ferry tickets are cheaper online, ferry ferry.","scope":"acme/ann/planner","createdAt":1795944955183},"3":{"id":"c","text":"\u6211\u559c\u6b22\u559d\u5496\u5561","scope":"acme/bob","createdAt":1795944955183}},"count":3},"sorting":{"language":"openrath-unicode","sortableProperties":["text"],"sortablePropertiesWithTypes":{"text":"string"},"sorts":{"text":{"docs":{"1":1,"2":0,"3":2},"orderedDocs":[[2,"Ferry tickets are cheaper online, ferry ferry."],[1,"The ferry leaves from pier 4."],[3,"\u6211\u559c\u6b22\u559d\u5496\u5561"]],"type":"string"}},"enabled":true,"isSorted":true},"pinning":{"rules":[]},"language":"openrath-unicode"}}';
const V1_VECTORS =
  '{"format":"openrath.memory-bm25","version":1,"savedAt":1795944955203,"tokenizer":"openrath-unicode-1","dimensions":26,"embedModel":"letters","count":3,"sha256":"331a42a913dd311f1ad259fdf46984b66717acd8b978e515a2b94f8b8727667b","body":{"internalDocumentIDStore":{"internalIdToId":["a","b","c","gone"]},"index":{"indexes":{"text":{"type":"Radix","node":{"w":"","s":"","e":false,"k":"","d":[],"c":[["t",{"w":"t","s":"t","e":false,"k":"t","d":[],"c":[["h",{"w":"the","s":"he","e":true,"k":"h","d":[1],"c":[]}],["i",{"w":"tickets","s":"ickets","e":true,"k":"i","d":[2],"c":[]}]]}],["f",{"w":"f","s":"f","e":false,"k":"f","d":[],"c":[["e",{"w":"ferry","s":"erry","e":true,"k":"e","d":[1,2],"c":[]}],["r",{"w":"from","s":"rom","e":true,"k":"r","d":[1],"c":[]}]]}],["l",{"w":"leaves","s":"leaves","e":true,"k":"l","d":[1],"c":[]}],["p",{"w":"pier","s":"pier","e":true,"k":"p","d":[1],"c":[]}],["4",{"w":"4","s":"4","e":true,"k":"4","d":[1],"c":[]}],["a",{"w":"are","s":"are","e":true,"k":"a","d":[2],"c":[]}],["c",{"w":"cheaper","s":"cheaper","e":true,"k":"c","d":[2],"c":[]}],["o",{"w":"online","s":"online","e":true,"k":"o","d":[2],"c":[]}],["\u6211",{"w":"\u6211","s":"\u6211","e":true,"k":"\u6211","d":[3],"c":[["\u559c",{"w":"\u6211\u559c","s":"\u559c","e":true,"k":"\u559c","d":[3],"c":[]}]]}],["\u559c",{"w":"\u559c","s":"\u559c","e":true,"k":"\u559c","d":[3],"c":[["\u6b22",{"w":"\u559c\u6b22","s":"\u6b22","e":true,"k":"\u6b22","d":[3],"c":[]}]]}],["\u6b22",{"w":"\u6b22","s":"\u6b22","e":true,"k":"\u6b22","d":[3],"c":[["\u559d",{"w":"\u6b22\u559d","s":"\u559d","e":true,"k":"\u559d","d":[3],"c":[]}]]}],["\u559d",{"w":"\u559d","s":"\u559d","e":true,"k":"\u559d","d":[3],"c":[["\u5496",{"w":"\u559d\u5496","s":"\u5496","e":true,"k":"\u5496","d":[3],"c":[]}]]}],["\u5496",{"w":"\u5496","s":"\u5496","e":true,"k":"\u5496","d":[3],"c":[["\u5561",{"w":"\u5496\u5561","s":"\u5561","e":true,"k":"\u5561","d":[3],"c":[]}]]}],["\u5561",{"w":"\u5561","s":"\u5561","e":true,"k":"\u5561","d":[3],"c":[]}],["r",{"w":"removed","s":"removed","e":true,"k":"r","d":[],"c":[]}],["e",{"w":"entry","s":"entry","e":true,"k":"e","d":[],"c":[]}]]},"isArray":false},"scope":{"type":"Flat","node":{"numberToDocumentId":[["acme/ann",[1]],["acme/ann/planner",[2]],["acme/bob",[3]]]},"isArray":false}},"vectorIndexes":{"embedding":{"size":26,"vectors":[[1,[7.483314773547883,[1,0,0,0,5,2,0,1,1,0,0,1,1,0,1,1,0,4,1,1,0,1,0,0,1,0]]],[2,[13.114877048604,[2,0,2,0,8,3,0,1,2,0,1,1,0,2,1,1,0,8,1,2,0,0,0,0,3,0]]],[3,[0,[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]]]]}},"searchableProperties":["text","scope","embedding"],"searchablePropertiesWithTypes":{"text":"string","scope":"enum","embedding":"vector[26]"},"frequencies":{"text":{"1":{"4":1,"the":1,"ferry":1,"leaves":1,"from":1,"pier":1},"2":{"ferry":3,"tickets":1,"are":1,"cheaper":1,"online":1},"3":{"\u6211":1,"\u559c":1,"\u6b22":1,"\u559d":1,"\u5496":1,"\u5561":1,"\u6211\u559c":1,"\u559c\u6b22":1,"\u6b22\u559d":1,"\u559d\u5496":1,"\u5496\u5561":1}}},"tokenOccurrences":{"text":{"4":1,"the":1,"ferry":2,"leaves":1,"from":1,"pier":1,"tickets":1,"are":1,"cheaper":1,"online":1,"\u6211":1,"\u559c":1,"\u6b22":1,"\u559d":1,"\u5496":1,"\u5561":1,"\u6211\u559c":1,"\u559c\u6b22":1,"\u6b22\u559d":1,"\u559d\u5496":1,"\u5496\u5561":1}},"avgFieldLength":{"text":8},"fieldLengths":{"text":{"1":6,"2":7,"3":11}}},"docs":{"docs":{"1":{"id":"a","text":"The ferry leaves from pier 4.","scope":"acme/ann","createdAt":1795944955202,"metadata":{"role":"user","tags":["travel"]},"source":"s-1","embedding":null},"2":{"id":"b","text":"Ferry tickets are cheaper online, ferry ferry.","scope":"acme/ann/planner","createdAt":1795944955202,"embedding":null},"3":{"id":"c","text":"\u6211\u559c\u6b22\u559d\u5496\u5561","scope":"acme/bob","createdAt":1795944955202,"embedding":null}},"count":3},"sorting":{"language":"openrath-unicode","sortableProperties":["text"],"sortablePropertiesWithTypes":{"text":"string"},"sorts":{"text":{"docs":{"1":1,"2":0,"3":2},"orderedDocs":[[2,"Ferry tickets are cheaper online, ferry ferry."],[1,"The ferry leaves from pier 4."],[3,"\u6211\u559c\u6b22\u559d\u5496\u5561"]],"type":"string"}},"enabled":true,"isSorted":true},"pinning":{"rules":[]},"language":"openrath-unicode"}}';

const planner = { tenant: "acme", user: "ann", agent: "planner" };
const dirs: string[] = [];
const open: Bm25Memory[] = [];
afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((m) => m.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dirWith(snapshot?: string): string {
  const dir = mkdtempSync(join(tmpdir(), "openrath-bm25-snapshot-"));
  dirs.push(dir);
  if (snapshot !== undefined) writeFileSync(join(dir, "memory.json"), snapshot);
  return dir;
}

async function openAt(
  path: string | undefined,
  options: Bm25MemoryOptions = {},
): Promise<{ memory: Bm25Memory; warnings: Bm25MemoryWarning[] }> {
  const warnings: Bm25MemoryWarning[] = [];
  const memory = await bm25Memory({
    flushDelayMs: 10_000,
    onWarning: (w) => warnings.push(w),
    ...options,
  }).open(path === undefined ? { scope: planner } : { path, scope: planner });
  open.push(memory);
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
  it("opens a version 1 snapshot as it was and rewrites it as version 2 at the next save", async () => {
    const dir = dirWith(V1_TEXT);
    const file = join(dir, "memory.json");
    const first = await openAt(dir);
    const before = await first.memory.recall("ferry pier", { topK: 5 });
    expect(before.map((h) => h.entry.id)).toEqual(["a", "b"]);
    expect(before[0]!.entry).toMatchObject({ metadata: { role: "user", tags: ["travel"] }, source: "s-1" });
    expect(await first.memory.recall("咖啡", { scope: { tenant: "acme", user: "bob" } })).toHaveLength(1);
    expect(first.warnings).toEqual([]);
    await first.memory.close();
    expect(header(file).version).toBe(2);
    expect(readFileSync(`${file}.bak`, "utf8").trim()).toBe(V1_TEXT);

    const second = await openAt(dir);
    expect(await second.memory.recall("ferry pier", { topK: 5 })).toEqual(before);
    expect(second.warnings).toEqual([]);
  });

  it("keeps the vectors of a version 1 snapshot (nothing is embedded again)", async () => {
    const dir = dirWith(V1_VECTORS);
    const embedded: string[] = [];
    const embed = async (texts: string[]) => {
      embedded.push(...texts);
      return letterEmbed(texts);
    };
    const options: Bm25MemoryOptions = { embed, embedModel: "letters", minSimilarity: 0.5 };
    const first = await openAt(dir, options);
    const before = await first.memory.recall("tickets online", { topK: 5 });
    expect(before.map((h) => h.entry.id)).toContain("b");
    await first.memory.close();
    const second = await openAt(dir, options);
    expect(await second.memory.recall("tickets online", { topK: 5 })).toEqual(before);
    expect(embedded).toEqual(["tickets online", "tickets online"]);
    expect([...first.warnings, ...second.warnings]).toEqual([]);
  });

  it("a version 2 snapshot whose postings name a missing entry is corrupt", async () => {
    const dir = dirWith();
    const memory = (await openAt(dir)).memory;
    await memory.remember({ text: "the boiler is in the cellar" });
    await memory.close();
    const file = join(dir, "memory.json");
    const { sha256: _, format: __, version: ___, ...rest } = header(file);
    const body = decodeSnapshot(readFileSync(file)).body as Record<string, unknown>;
    // Entry 2 of 1: the first posting byte is 2 × zigzag(2) = 8.
    writeFileSync(file, encodeSnapshot(rest, { ...body, counts: [1], tokens: ["boiler"], postings: "CA==" }));
    const error = await rejection(openAt(dir));
    expect(error.code).toBe("memory_corrupt");
    expect(error.details).toMatchObject({ reason: "invalid_data" });
    expect(error.message).toMatch(/names an invalid entry/);
  });
});

describe("scope filtering", () => {
  it("a scope with few of the entries gets exactly its own best topK, however the others score", async () => {
    for (const [mine, others] of [
      [12, 150], // over 1 in 16 visible: searched without a filter, invisible hits dropped
      [3, 200], // under 1 in 16: filtered inside Orama
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
