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
import { decodeSnapshot, encodeSnapshot } from "./internal/snapshot-file.js";

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
  it("writes version 3 with the change-log generation that follows it", async () => {
    const dir = dirWith();
    const memory = (await openAt(dir)).memory;
    await memory.remember({ text: "the boiler is in the cellar" });
    await memory.close();
    const h = header(join(dir, "memory.json"));
    expect(h).toMatchObject({ format: "openrath.memory-bm25", version: 3, count: 1, log: 2 });
  });

  it("refuses versions 1 and 2 (only unreleased builds wrote them) and newer versions with memory_unsupported_version", async () => {
    for (const [version, pattern] of [
      [1, /unreleased/],
      [2, /unreleased/],
      [4, /newer.*upgrade/],
    ] as const) {
      const dir = dirWith();
      const memory = (await openAt(dir)).memory;
      await memory.remember({ text: "versioned entry" });
      await memory.close();
      const file = join(dir, "memory.json");
      writeFileSync(file, readFileSync(file, "utf8").replace('"version":3', `"version":${version}`));
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
    const { sha256: _, format: __, version: ___, bytes: ____, ...rest } = { ...header(file), bytes: 0 };
    const body = decodeSnapshot(readFileSync(file)).body as Record<string, unknown>;
    // Entry number 1 of 1 entry (0 is the only one): the posting byte is 2 × (1 − (−1)) = 4.
    writeFileSync(
      file,
      encodeSnapshot(rest, { ...body, terms: ["boiler"], counts: [1], sizes: [1], postings: "BA==" }),
    );
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
