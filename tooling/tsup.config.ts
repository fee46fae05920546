import { defineConfig, type Options } from "tsup";

/**
 * The one build configuration every published package uses: ESM only, declarations, source maps,
 * no bundling of dependencies, and an output file per entry (`src/index.ts` → `dist/index.js`).
 *
 * @param entry - map of output name to source file, mirroring the package's `exports`.
 */
export function libraryConfig(entry: Record<string, string>, overrides: Options = {}) {
  return defineConfig({
    entry,
    format: ["esm"],
    target: "node20",
    platform: "neutral",
    dts: true,
    sourcemap: true,
    clean: true,
    splitting: true,
    treeshake: true,
    ...overrides,
  });
}
