import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describeMemoryConformance } from "@openrath/testing/memory";
import { afterAll } from "vitest";
import { bm25Memory } from "./bm25-memory.js";
import { letterEmbed } from "./internal/letter-embed.test-helper.js";

const dirs: string[] = [];
function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "openrath-bm25-conformance-"));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const inMemory = bm25Memory();
describeMemoryConformance({
  name: "bm25 (in memory)",
  create: () => inMemory.open(undefined),
  // A store without a path lives and dies with its handle: nothing to reopen or share.
  capabilities: { ...inMemory.capabilities, persistence: false, sharedWriters: false },
});

/** The child process the crash-survival test kills: `src/testing/crash-writer.ts` through tsx. */
const crashWriter =
  (path: () => string, env: Record<string, string> = {}) =>
  () => ({
    command: process.execPath,
    args: ["--conditions=@openrath/source", "--import", "tsx", "src/testing/crash-writer.ts"],
    cwd: fileURLToPath(new URL("..", import.meta.url)),
    env: { BM25_CRASH_DIR: path(), ...env },
  });

const onDisk = bm25Memory();
let dir = "";
describeMemoryConformance({
  name: "bm25 (directory)",
  create: () => {
    dir = freshDir();
    return onDisk.open({ path: dir });
  },
  reopen: () => onDisk.open({ path: dir }),
  capabilities: onDisk.capabilities,
  crashWriter: crashWriter(() => dir),
});

// Durability "write" (no fsync) still survives a crash of the process.
const unsynced = bm25Memory({ durability: "write" });
let unsyncedDir = "";
describeMemoryConformance({
  name: "bm25 (directory, durability write)",
  create: () => {
    unsyncedDir = freshDir();
    return unsynced.open({ path: unsyncedDir });
  },
  reopen: () => unsynced.open({ path: unsyncedDir }),
  capabilities: unsynced.capabilities,
  crashWriter: crashWriter(() => unsyncedDir, { BM25_DURABILITY: "write" }),
});

// Letter counts of any two English sentences are similar (cosine ~0.7), so only near-anagrams
// count as vector matches here; real embeddings work with the default minSimilarity.
const hybrid = bm25Memory({ embed: letterEmbed, minSimilarity: 0.95 });
let hybridDir = "";
describeMemoryConformance({
  name: "bm25 (directory, hybrid with letter-count embeddings)",
  create: () => {
    hybridDir = freshDir();
    return hybrid.open({ path: hybridDir });
  },
  reopen: () => hybrid.open({ path: hybridDir }),
  capabilities: hybrid.capabilities,
  crashWriter: crashWriter(() => hybridDir, { BM25_EMBED: "letters" }),
  // Anagrams: no shared word, the same letters, so letter-count vectors find one from the other.
  paraphrase: { text: "A gentleman.", query: "elegant man" },
});
