import { defineConfig } from "vitest/config";

// One run over every workspace project; each package also runs alone with its own config.
export default defineConfig({
  test: {
    projects: ["packages/*/vitest.config.ts", "apps/*/vitest.config.ts", "tooling/vitest.config.ts"],
  },
});
