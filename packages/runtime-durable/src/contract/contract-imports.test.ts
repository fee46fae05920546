import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const here = fileURLToPath(new URL(".", import.meta.url));
const modules = readdirSync(here).filter((name) => name.endsWith(".ts") && !/\.test(-d)?\.ts$/.test(name));

/** Every module specifier of a file's `import … from`, `export … from` and `import(…)`. */
function specifiersOf(source: string): string[] {
  const found: string[] = [];
  for (const m of source.matchAll(/^\s*(?:import|export)\b[^"';]*?\bfrom\s*"([^"]+)"/gm)) found.push(m[1]!);
  for (const m of source.matchAll(/^\s*import\s*"([^"]+)"/gm)) found.push(m[1]!);
  for (const m of source.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g)) found.push(m[1]!);
  return found;
}

describe("contract/", () => {
  it("holds the contract modules", () => {
    expect(modules).toEqual(expect.arrayContaining(["run-store.ts", "signals.ts", "artifact-store.ts"]));
  });

  it.each(modules)("%s imports only other contract modules, @openrath/core and Node builtins", (name) => {
    const source = readFileSync(`${here}${name}`, "utf8");
    for (const specifier of specifiersOf(source)) {
      const allowed =
        /^\.\/[^/]+\.js$/.test(specifier) || specifier === "@openrath/core" || specifier.startsWith("node:");
      expect(allowed, `${name} imports ${JSON.stringify(specifier)}`).toBe(true);
    }
  });

  it("the import check sees a reach outside the folder", () => {
    const bad = specifiersOf('import { x } from "../runtime.js";\nexport { y } from "./ok.js";');
    expect(bad).toEqual(["../runtime.js", "./ok.js"]);
  });
});
