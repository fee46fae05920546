import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import type { Bm25Memory } from "../bm25-memory.js";

/**
 * The temporary directories and open stores of one test file: after each test the stores are
 * closed and the directories removed. Call once at the top of the file.
 */
export function tempStores(prefix: string): {
  /** A new empty directory, removed after the test. */
  dir(): string;
  /** Registers stores to close after the test; returns the first. */
  track(memory: Bm25Memory, ...more: Bm25Memory[]): Bm25Memory;
} {
  const dirs: string[] = [];
  const open: Bm25Memory[] = [];
  afterEach(async () => {
    await Promise.allSettled(open.splice(0).map((m) => m.close()));
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return {
    dir() {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(dir);
      return dir;
    },
    track(memory, ...more) {
      open.push(memory, ...more);
      return memory;
    },
  };
}
