import { appendFileSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { OpenRathError } from "@openrath/core";
import { describe, expect, it } from "vitest";
import {
  type Bm25Memory,
  type Bm25MemoryOptions,
  type Bm25MemoryWarning,
  bm25Memory,
} from "./bm25-memory.js";
import { decodeSnapshot } from "./internal/snapshot-format.js";
import { tempStores } from "./testing/temp-stores.js";

const scope = { tenant: "acme" };
const stores = tempStores("openrath-bm25-durability-");

const tempDir = () => stores.dir();

async function openAt(path: string, options: Bm25MemoryOptions = {}): Promise<Bm25Memory> {
  const memory = await bm25Memory(options).open({ path, scope });
  stores.track(memory);
  return memory;
}

const logs = (dir: string) =>
  readdirSync(dir)
    .filter((n) => n.endsWith(".log"))
    .sort();
const size = (path: string) => statSync(path).size;

describe("change log", () => {
  it("one new entry in a store of thousands costs O(entry) on disk: the snapshot is not rewritten", async () => {
    const dir = tempDir();
    const memory = await openAt(dir);
    await memory.remember(
      Array.from({ length: 3_000 }, (_, i) => ({ text: `filler entry ${i} about topic ${i % 97}` })),
    );
    await memory.flush();
    const snapshot = join(dir, "memory.json");
    const snapshotBefore = readFileSync(snapshot);
    const [log] = logs(dir);
    const logBefore = size(join(dir, log!));
    const text = "One more entry: the courier comes on Wednesdays.";
    await memory.remember({ text });
    expect(readFileSync(snapshot).equals(snapshotBefore), "the snapshot was rewritten").toBe(true);
    const grew = size(join(dir, log!)) - logBefore;
    expect(grew).toBeGreaterThan(text.length);
    expect(grew).toBeLessThan(text.length + 300);
    expect(snapshotBefore.length).toBeGreaterThan(100 * grew);
  });

  it("compacts the log into a new snapshot once it outgrows compactLogBytes, keeping one older log for the backup", async () => {
    const dir = tempDir();
    const memory = await openAt(dir, { compactLogBytes: 2_000 });
    for (let i = 0; i < 60; i++) await memory.remember({ text: `entry number ${i} of the compaction test` });
    await memory.flush();
    const header = decodeSnapshot(readFileSync(join(dir, "memory.json"))).header;
    expect(header.count).toBe(60);
    expect(logs(dir).length).toBeLessThanOrEqual(2);
    expect(logs(dir)).toContain(`memory-${header.log}.log`);
    await memory.close();
    const again = await openAt(dir);
    expect(await again.recall("compaction", { topK: 100 })).toHaveLength(60);
  });

  it("cuts off a last batch that a crash interrupted, warns, and keeps writing after it", async () => {
    const dir = tempDir();
    const first = await openAt(dir);
    await first.remember({ text: "acknowledged before the crash" });
    // What a process killed mid-write leaves: a batch line without its end.
    const [log] = logs(dir);
    await first.close();
    const last = logs(dir).at(-1)!;
    appendFileSync(join(dir, last), '0123456789abcdef [{"op":"put","doc":{"id":"half');
    const warnings: Bm25MemoryWarning[] = [];
    const second = await openAt(dir, { onWarning: (w) => warnings.push(w) });
    expect(warnings.map((w) => w.code)).toEqual(["log_repaired"]);
    expect(await second.recall("acknowledged crash")).toHaveLength(1);
    await second.remember({ text: "written after the repair" });
    await second.close();
    const third = await openAt(dir);
    expect((await third.recall("acknowledged repair", { topK: 10 })).map((h) => h.entry.text).sort()).toEqual(
      ["acknowledged before the crash", "written after the repair"],
    );
    expect(log).toBeDefined();
  });

  it("a damaged batch before the last one makes the store corrupt, naming the log", async () => {
    const dir = tempDir();
    const first = await openAt(dir);
    await first.remember({ text: "batch one" });
    await first.remember({ text: "batch two" });
    // Kill without close: copy the directory's log while the store is open.
    const [log] = logs(dir);
    const bytes = readFileSync(join(dir, log!), "utf8");
    await first.close();
    const copy = tempDir();
    writeFileSync(join(copy, log!), bytes.replace("batch one", "batch 0ne"));
    const error = await openAt(copy).catch((e: unknown) => e);
    expect(OpenRathError.isInstance(error, "memory_corrupt")).toBe(true);
    expect((error as Error).message).toMatch(/change log .*memory-1\.log.*damaged/);
  });

  it("a change log of a newer version is memory_unsupported_version", async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, "memory-1.log"),
      `${JSON.stringify({ format: "openrath.memory-bm25.log", version: 7, generation: 1 })}\n`,
    );
    const error = await openAt(dir).catch((e: unknown) => e);
    expect(OpenRathError.isInstance(error, "memory_unsupported_version")).toBe(true);
  });

  it("a remember whose embedding fails changes nothing, in memory and on disk", async () => {
    const dir = tempDir();
    let fail = false;
    const embed = async (texts: string[]) => {
      if (fail) throw new Error("embedding service down");
      return texts.map((t) => [t.length, 1]);
    };
    const memory = await openAt(dir, { embed, search: "hybrid" });
    await memory.remember({ id: "kept", text: "the first entry stays" });
    fail = true;
    const error = await memory
      .remember([{ id: "kept", text: "a replacement that must not land" }, { text: "new" }])
      .catch((e: unknown) => e);
    expect(OpenRathError.isInstance(error, "memory_unavailable")).toBe(true);
    fail = false;
    expect((await memory.recall("entry stays")).map((h) => h.entry.text)).toEqual(["the first entry stays"]);
    await memory.close();
    const again = await openAt(dir, { embed, search: "hybrid" });
    expect(
      (await again.recall("replacement entry stays first", { topK: 10 })).map((h) => h.entry.text),
    ).toEqual(["the first entry stays"]);
  });
});
