import { execFileSync, spawn } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { OpenRathError } from "@openrath/core";
import { describe, expect, it } from "vitest";
import {
  type Bm25Memory,
  type Bm25MemoryOptions,
  type Bm25MemoryWarning,
  bm25Memory,
} from "./bm25-memory.js";
import { replaceInFile, rewriteSnapshot, writeChunks } from "./internal/snapshot.test-helper.js";
import { decodeSnapshot, encodeSnapshot } from "./internal/snapshot-format.js";
import { readPackedIndex } from "./internal/snapshot-layout.js";
import { tempStores } from "./testing/temp-stores.js";

const scope = { tenant: "acme", user: "ann" };
const stores = tempStores("openrath-bm25-test-");

const tempDir = () => stores.dir();

async function openAt(path: string, options: Bm25MemoryOptions = {}): Promise<Bm25Memory> {
  const memory = await bm25Memory({ ...options }).open({ path, scope });
  stores.track(memory);
  return memory;
}

function collect(): { warnings: Bm25MemoryWarning[]; onWarning: (w: Bm25MemoryWarning) => void } {
  const warnings: Bm25MemoryWarning[] = [];
  return { warnings, onWarning: (w) => warnings.push(w) };
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

/** A directory holding two generations: memory.json (2 entries) and memory.json.bak (1 entry). */
async function twoGenerations(): Promise<string> {
  const dir = tempDir();
  const memory = await openAt(dir);
  await memory.remember({ text: "first generation: the boiler is in the cellar" });
  await memory.flush();
  await memory.remember({ text: "second generation: the fuse box is in the hall" });
  await memory.close();
  return dir;
}

describe("persistence", () => {
  it("reopening returns the same entries, metadata and scores", async () => {
    const dir = tempDir();
    const first = await openAt(dir);
    const stored = await first.remember([
      { text: "The ferry leaves from pier 4.", metadata: { role: "user", tags: ["travel"] }, source: "s-1" },
      { text: "Ferry tickets are cheaper online.", scope: { ...scope, agent: "planner" } },
      { id: "custom", text: "The ferry timetable changes in May." },
    ]);
    const before = await first.recall("ferry", { scope: { ...scope, agent: "planner" }, topK: 10 });
    await first.close();
    expect(readdirSync(dir).sort()).toEqual(["memory-2.log", "memory.json"]);

    const second = await openAt(dir);
    const after = await second.recall("ferry", { scope: { ...scope, agent: "planner" }, topK: 10 });
    expect(after).toEqual(before);
    expect(after.map((h) => h.entry).sort((a, b) => a.id.localeCompare(b.id))).toEqual(
      [...stored].sort((a, b) => a.id.localeCompare(b.id)),
    );
  });

  it("writes a versioned, checksummed snapshot and keeps the previous one as memory.json.bak", async () => {
    const dir = await twoGenerations();
    const main = decodeSnapshot(readFileSync(join(dir, "memory.json")));
    const backup = decodeSnapshot(readFileSync(join(dir, "memory.json.bak")));
    expect(main.header).toMatchObject({
      format: "openrath.memory-bm25",
      version: 4,
      count: 2,
      dimensions: null,
    });
    expect(backup.header.count).toBe(1);
    expect(main.header.crc32).toEqual(expect.any(Number));
  });

  it("an acknowledged change is in the change log before remember resolves; the snapshot waits for compaction", async () => {
    const dir = tempDir();
    const memory = await openAt(dir);
    await memory.remember({ text: "logged before the promise resolved" });
    expect(readdirSync(dir)).not.toContain("memory.json");
    expect(readFileSync(join(dir, "memory-1.log"), "utf8")).toContain("logged before the promise resolved");
    await memory.forget({ ids: [(await memory.recall("logged"))[0]!.entry.id], scope });
    expect(readFileSync(join(dir, "memory-1.log"), "utf8")).toContain('"op":"delete"');
  });

  it("ignores and removes a temporary file left by a crash during a save", async () => {
    const dir = await twoGenerations();
    const leftover = join(dir, "memory.json.4242-abcdef.tmp");
    writeFileSync(leftover, '{"format":"openrath.memory-bm25","version":1,"savedAt":1,"tok');
    const { warnings, onWarning } = collect();
    const memory = await openAt(dir, { onWarning });
    expect((await memory.recall("fuse box")).map((h) => h.entry.text)).toEqual([
      "second generation: the fuse box is in the hall",
    ]);
    expect(readdirSync(dir)).not.toContain("memory.json.4242-abcdef.tmp");
    expect(warnings.map((w) => w.code)).toEqual(["temp_files_removed"]);
  });

  it("a corrupt memory.json gives memory_corrupt naming the file and the problem, and leaves both files intact", async () => {
    const dir = await twoGenerations();
    const file = join(dir, "memory.json");
    const truncated = readFileSync(file, "utf8").slice(0, 120);
    writeFileSync(file, truncated);
    const backupBytes = readFileSync(`${file}.bak`);

    const error = await rejection(openAt(dir));
    expect(error.code).toBe("memory_corrupt");
    expect(error.message).toContain(file);
    expect(error.message).toMatch(/not valid JSON/);
    expect(error.message).toMatch(/memory\.json\.bak is intact \(1 entries\)/);
    expect(error.details).toMatchObject({ file, reason: "invalid_json", backup: { entries: 1 } });
    expect(readFileSync(file, "utf8")).toBe(truncated);
    expect(readFileSync(`${file}.bak`).equals(backupBytes)).toBe(true);

    // The failed open released the directory: a fixed file opens normally.
    writeFileSync(file, backupBytes);
    const memory = await openAt(dir);
    expect(await memory.recall("boiler")).toHaveLength(1);
  });

  it("a snapshot whose content does not match its checksum is corrupt", async () => {
    const dir = await twoGenerations();
    const file = join(dir, "memory.json");
    replaceInFile(file, "fuse box", "fuse b0x");
    const error = await rejection(openAt(dir));
    expect(error.code).toBe("memory_corrupt");
    expect(error.message).toMatch(/checksum/);
    expect(error.details).toMatchObject({ reason: "checksum" });
  });

  it("a snapshot cut short after its header is corrupt (truncated), and its backup is named", async () => {
    const dir = await twoGenerations();
    const file = join(dir, "memory.json");
    const bytes = readFileSync(file);
    writeFileSync(file, bytes.subarray(0, bytes.length - 10));
    const error = await rejection(openAt(dir));
    expect(error.code).toBe("memory_corrupt");
    expect(error.message).toMatch(/truncated/);
    expect(error.details).toMatchObject({ reason: "truncated", backup: { entries: 1 } });
  });

  it('onCorrupt: "use-backup" loads memory.json.bak, keeps the corrupt file aside and warns', async () => {
    const dir = await twoGenerations();
    const file = join(dir, "memory.json");
    writeFileSync(file, "garbage");
    const { warnings, onWarning } = collect();
    const memory = await openAt(dir, { onCorrupt: "use-backup", onWarning });
    expect((await memory.recall("boiler")).map((h) => h.entry.text)).toEqual([
      "first generation: the boiler is in the cellar",
    ]);
    // The backup's change log is kept until the next compaction, so nothing is lost.
    expect((await memory.recall("fuse")).map((h) => h.entry.text)).toEqual([
      "second generation: the fuse box is in the hall",
    ]);
    expect(warnings.map((w) => w.code)).toEqual(["backup_loaded"]);
    expect(warnings[0]!.message).toContain(file);
    const aside = readdirSync(dir).find((name) => name.startsWith("memory.json.corrupt-"));
    expect(aside).toBeDefined();
    expect(readFileSync(join(dir, aside!), "utf8")).toBe("garbage");

    // Saving the recovered state never makes the corrupt file the backup.
    await memory.remember({ text: "third generation" });
    await memory.flush();
    expect(decodeSnapshot(readFileSync(`${file}.bak`)).header.count).toBe(2);
    expect(decodeSnapshot(readFileSync(file)).header.count).toBe(3);
  });

  it("a missing memory.json with a backup (a save interrupted between renames) loads the backup", async () => {
    const dir = await twoGenerations();
    rmSync(join(dir, "memory.json"));
    const { warnings, onWarning } = collect();
    const memory = await openAt(dir, { onWarning });
    expect(await memory.recall("boiler")).toHaveLength(1);
    expect(await memory.recall("fuse")).toHaveLength(1);
    expect(warnings.map((w) => w.code)).toEqual(["backup_loaded"]);
  });

  it("a snapshot of a newer format version is refused with memory_unsupported_version", async () => {
    const dir = tempDir();
    const file = join(dir, "memory.json");
    writeChunks(
      file,
      encodeSnapshot(
        {
          savedAt: 1,
          tokenizer: "x",
          dimensions: null,
          embedModel: null,
          count: 0,
          terms: 0,
          scopes: 0,
          log: 1,
        },
        [],
      ),
    );
    replaceInFile(file, '"version":4', '"version":9');
    const error = await rejection(openAt(dir));
    expect(error.code).toBe("memory_unsupported_version");
    expect(error.message).toMatch(/format version 9.*newer.*upgrade/);
    expect(error.details).toMatchObject({ reason: "newer_version" });
  });

  it("a file that is not a snapshot is refused", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "memory.json"), JSON.stringify({ hello: "world" }));
    const error = await rejection(openAt(dir));
    expect(error.code).toBe("memory_corrupt");
    expect(error.message).toMatch(/not "openrath.memory-bm25"/);
  });

  it("a snapshot made with another tokenizer is re-indexed on open", async () => {
    const dir = await twoGenerations();
    const file = join(dir, "memory.json");
    rewriteSnapshot(file, (fields, sections) => ({
      fields: { ...fields, tokenizer: "openrath-unicode-0" },
      sections,
    }));
    const { warnings, onWarning } = collect();
    const memory = await openAt(dir, { onWarning });
    expect(await memory.recall("fuse box")).toHaveLength(1);
    expect(warnings.map((w) => w.code)).toEqual(["reindexed"]);
    await memory.close();
    expect(decodeSnapshot(readFileSync(file)).header.tokenizer).toMatch(/^openrath-unicode-2\+/);
  });

  it("a store opened with other stop words re-indexes its entries", async () => {
    const dir = await twoGenerations();
    const { warnings, onWarning } = collect();
    const memory = await openAt(dir, { stopWords: ["the"], onWarning });
    expect(warnings.map((w) => w.code)).toEqual(["reindexed"]);
    expect(await memory.recall("the")).toEqual([]);
    expect(await memory.recall("cellar")).toHaveLength(1);
  });

  it("forgotten entries stay forgotten after reopen and ids of removed entries are not kept forever", async () => {
    const dir = tempDir();
    const memory = await openAt(dir);
    for (let round = 0; round < 3; round++) {
      const stored = await memory.remember(
        Array.from({ length: 600 }, (_, i) => ({ text: `note ${round} ${i}` })),
      );
      await memory.forget({ ids: stored.map((e) => e.id), scope });
    }
    await memory.remember({ text: "survivor" });
    await memory.close();
    const again = await openAt(dir);
    expect((await again.recall("note survivor", { topK: 50 })).map((h) => h.entry.text)).toEqual([
      "survivor",
    ]);
    await again.close();
    const { index } = readPackedIndex(decodeSnapshot(readFileSync(join(dir, "memory.json"))));
    expect(index.docs.count).toBe(1);
    expect(index.terms.filter((t) => !t.startsWith("surviv"))).toEqual([]);
  });
});

describe("one process per directory", () => {
  it("refuses a directory another live process holds, naming it", async () => {
    const dir = tempDir();
    const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)"], { stdio: "ignore" });
    try {
      writeFileSync(
        join(dir, "memory.lock"),
        JSON.stringify({ pid: child.pid, host: hostname(), since: Date.now() }),
      );
      const error = await rejection(openAt(dir));
      expect(error.code).toBe("memory_unavailable");
      expect(error.message).toContain(`pid ${child.pid}`);
    } finally {
      child.kill();
    }
  });

  it("takes over a lock with this pid from an earlier process, refuses one from another copy of the package", async () => {
    const dir = tempDir();
    const lock = join(dir, "memory.lock");
    writeFileSync(lock, JSON.stringify({ pid: process.pid, host: hostname(), since: 1, token: "earlier" }));
    const memory = await openAt(dir);
    const token = JSON.parse(readFileSync(lock, "utf8")).token as string;
    expect(token).not.toBe("earlier");
    await memory.close();

    const other = tempDir();
    writeFileSync(
      join(other, "memory.lock"),
      JSON.stringify({ pid: process.pid, host: hostname(), since: 1, token }),
    );
    const error = await rejection(openAt(other));
    expect(error.code).toBe("memory_unavailable");
  });

  it("takes over the lock of a process that is gone", async () => {
    const dir = tempDir();
    const pid = Number(execFileSync(process.execPath, ["-p", "process.pid"], { encoding: "utf8" }));
    writeFileSync(join(dir, "memory.lock"), JSON.stringify({ pid, host: hostname(), since: 1 }));
    const memory = await openAt(dir);
    await memory.remember({ text: "taken over" });
    await memory.close();
    expect(readdirSync(dir)).not.toContain("memory.lock");
  });
});
