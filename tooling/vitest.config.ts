import { defineProject } from "vitest/config";

// The packaging test builds, packs, installs and type-checks every public package: minutes, not
// seconds, so its steps get long timeouts.
export default defineProject({
  test: {
    name: "tooling",
    include: ["test/**/*.test.ts"],
    testTimeout: 600_000,
    hookTimeout: 120_000,
  },
});
