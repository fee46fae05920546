import { defineConfig } from "tsup";

/**
 * The one build configuration every published package uses: ESM only, declarations, source maps,
 * no bundling of dependencies, and an output file per entry (`src/index.ts` → `dist/index.js`).
 * Plain JavaScript, because tsup loads a workspace dependency's config without compiling it.
 *
 * @param {Record<string, string>} entry - output name → source file, mirroring the package's `exports`.
 * @param {import("tsup").Options} [overrides]
 */
export function libraryConfig(entry, overrides = {}) {
  return defineConfig({
    entry,
    format: ["esm"],
    target: "node20",
    platform: "node",
    dts: true,
    sourcemap: true,
    clean: true,
    splitting: true,
    treeshake: true,
    removeNodeProtocol: false,
    ...overrides,
  });
}
