import { readFileSync } from "node:fs";
import { join } from "node:path";
import { OpenRathError } from "@openrath/core";
import { describe, expect, it } from "vitest";
import { type Bm25Memory, bm25Memory } from "./bm25-memory.js";
import { letterEmbed } from "./internal/letter-embed.test-helper.js";
import { decodeSnapshot } from "./internal/snapshot-format.js";
import { tempStores } from "./testing/temp-stores.js";

const stores = tempStores("openrath-bm25-shared-");

const tempDir = () => stores.dir();

const backend = bm25Memory();
async function openAt(path: string, scope = { tenant: "acme" }): Promise<Bm25Memory> {
  const memory = await backend.open({ path, scope });
  stores.track(memory);
  return memory;
}

const texts = async (memory: Bm25Memory, query: string) =>
  (await memory.recall(query, { topK: 20 })).map((hit) => hit.entry.text).sort();

describe("one store per directory in a process", () => {
  it("two opens share the data and see each other's writes at once", async () => {
    const dir = tempDir();
    const a = await openAt(dir);
    const b = await openAt(dir);
    const [fromA] = await a.remember({ text: "written through a" });
    expect(await texts(b, "written")).toEqual(["written through a"]);
    await b.remember({ text: "written through b" });
    expect(await texts(a, "written")).toEqual(["written through a", "written through b"]);
    expect(await b.forget({ ids: [fromA!.id] })).toBe(1);
    expect(await texts(a, "written")).toEqual(["written through b"]);
  });

  it("the same directory spelled differently is the same store", async () => {
    const dir = tempDir();
    const a = await openAt(dir);
    const b = await openAt(join(dir, "..", dir.split("/").pop()!, "."));
    expect(b.directory).toBe(a.directory);
    await a.remember({ text: "one store" });
    expect(await texts(b, "store")).toEqual(["one store"]);
  });

  it("concurrent opens of a new directory share one store", async () => {
    const dir = tempDir();
    const [a, b, c] = await Promise.all([openAt(dir), openAt(dir), openAt(dir)]);
    await Promise.all([
      a!.remember({ text: "from a" }),
      b!.remember({ text: "from b" }),
      c!.remember({ text: "from c" }),
    ]);
    expect(await texts(c!, "from")).toEqual(["from a", "from b", "from c"]);
  });

  it("closing one handle keeps the other working; the last close saves", async () => {
    const dir = tempDir();
    const a = await openAt(dir);
    const b = await openAt(dir);
    await a.remember({ text: "before the first close" });
    await a.close();
    await expect(a.recall("close")).rejects.toMatchObject({ code: "memory_closed" });
    await b.remember({ text: "after the first close" });
    expect(await texts(b, "close")).toEqual(["after the first close", "before the first close"]);
    expect(() => readFileSync(join(dir, "memory.json"))).toThrow();
    await b.close();
    expect(decodeSnapshot(readFileSync(join(dir, "memory.json"))).header.count).toBe(2);
  });

  it("closing a handle twice releases the store once", async () => {
    const dir = tempDir();
    const a = await openAt(dir);
    const b = await openAt(dir);
    await a.close();
    await a.close();
    await b.remember({ text: "still open" });
    expect(await texts(b, "open")).toEqual(["still open"]);
  });

  it("each handle has its own default scope", async () => {
    const dir = tempDir();
    const ann = await openAt(dir, { tenant: "acme", user: "ann" } as never);
    const bob = await openAt(dir, { tenant: "acme", user: "bob" } as never);
    await ann.remember({ text: "ann's secret" });
    await bob.remember({ text: "bob's secret" });
    expect(await texts(ann, "secret")).toEqual(["ann's secret"]);
    expect(await texts(bob, "secret")).toEqual(["bob's secret"]);
  });

  it("a reopen after the last close (even while it is saving) loads the saved data", async () => {
    const dir = tempDir();
    const a = await openAt(dir);
    await a.remember({ text: "saved across opens" });
    const closing = a.close();
    const b = await openAt(dir);
    await closing;
    expect(await texts(b, "saved")).toEqual(["saved across opens"]);
  });

  it("a second open with options that change indexing is refused, and the store stays usable", async () => {
    const dir = tempDir();
    const a = await openAt(dir);
    await a.remember({ text: "indexed plainly" });
    const other = bm25Memory({ stopWords: ["the"] });
    const error = await other.open({ path: dir }).catch((e: unknown) => e);
    expect(OpenRathError.isInstance(error, "invalid_argument")).toBe(true);
    expect((error as Error).message).toMatch(/already open in this process with different options/);
    const embedding = await bm25Memory({ embed: letterEmbed })
      .open({ path: dir })
      .catch((e: unknown) => e);
    expect(OpenRathError.isInstance(embedding, "invalid_argument")).toBe(true);
    expect(await texts(a, "indexed")).toEqual(["indexed plainly"]);
  });

  it("handles may rank differently (k1 and b are per handle)", async () => {
    const dir = tempDir();
    const a = await bm25Memory({ b: 1 }).open({ path: dir });
    const b = await bm25Memory({ b: 0 }).open({ path: dir });
    stores.track(a, b);
    const long = `zebra zebra ${"grass ".repeat(30)}`.trim();
    await a.remember([{ text: long }, { text: "zebra crossing" }, { text: "kiwi" }]);
    expect((await a.recall("zebra"))[0]!.entry.text).toBe("zebra crossing");
    expect((await b.recall("zebra"))[0]!.entry.text).toBe(long);
  });

  it("stores without a path are separate", async () => {
    const a = await backend.open(undefined);
    const b = await backend.open(undefined);
    stores.track(a, b);
    await a.remember({ text: "only in a" });
    expect(await b.recall("only")).toEqual([]);
    expect(a.directory).toBeUndefined();
  });
});
