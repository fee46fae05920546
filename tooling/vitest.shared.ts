import { defineProject, type ViteUserConfig } from "vitest/config";

/**
 * The vitest project every package uses: colocated `*.test.ts`, type tests in `*.test-d.ts`, and
 * workspace imports resolved to TypeScript sources through the `@openrath/source` condition.
 */
export function packageProject(name: string, overrides: ViteUserConfig["test"] = {}) {
  return defineProject({
    resolve: { conditions: ["@openrath/source"] },
    ssr: { resolve: { conditions: ["@openrath/source"] } },
    test: {
      name,
      include: ["src/**/*.test.ts", "test/**/*.test.ts"],
      typecheck: { enabled: true, include: ["src/**/*.test-d.ts"], tsconfig: "./tsconfig.json" },
      // Workers log JSON lines by default; tests that check logging pass their own logger.
      env: { OPENRATH_LOG_LEVEL: process.env.OPENRATH_LOG_LEVEL ?? "silent", ...overrides.env },
      ...overrides,
    },
  });
}
