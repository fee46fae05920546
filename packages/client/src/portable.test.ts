import { readdir, readFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import { describe, expect, it } from "vitest";

const SRC = new URL("./", import.meta.url);
const BUILTINS = new Set(builtinModules);

/** The published source files: neither tests nor `src/testing/`. */
async function publishedSources(): Promise<string[]> {
  const entries = await readdir(SRC, { recursive: true });
  return entries
    .map((entry) => entry.split("\\").join("/"))
    .filter((path) => path.endsWith(".ts") && !/\.test(-d)?\.ts$/.test(path) && !path.startsWith("testing/"));
}

describe("the published source", () => {
  it("imports no Node builtin, so it runs in a browser (fetch, streams and TextDecoder only)", async () => {
    const sources = await publishedSources();
    expect(sources).toContain("event-stream.ts");
    const offenders: string[] = [];
    for (const path of sources) {
      const text = await readFile(new URL(path, SRC), "utf8");
      for (const match of text.matchAll(/\bfrom\s+["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']/g)) {
        const specifier = match[1] ?? match[2] ?? "";
        if (specifier.startsWith("node:") || BUILTINS.has(specifier.split("/")[0] ?? ""))
          offenders.push(`${path}: ${specifier}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
