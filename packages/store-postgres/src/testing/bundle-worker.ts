import { join } from "node:path";
import { fileURLToPath } from "node:url";

const bundles = new Map<string, Promise<string>>();

/**
 * A worker script of this folder (`<name>.ts`) bundled once per test process into one JavaScript
 * file — workspace packages inlined from source, the database drivers external — so each of a
 * kill loop's restarts costs a Node start, not a TypeScript compile.
 */
export function bundleWorker(name: string): Promise<string> {
  let bundled = bundles.get(name);
  if (!bundled) {
    bundled = (async () => {
      const { build } = await import("esbuild");
      const here = fileURLToPath(new URL(".", import.meta.url));
      // Inside the package's node_modules, so the bundle's bare imports (pg, kysely) resolve from there.
      const out = join(here, "..", "..", "node_modules", ".openrath-workers", `${name}-${process.pid}.mjs`);
      await build({
        entryPoints: [join(here, `${name}.ts`)],
        bundle: true,
        platform: "node",
        format: "esm",
        target: "node20",
        outfile: out,
        conditions: ["@openrath/source"],
        external: ["pg", "@electric-sql/pglite", "kysely", "esbuild"],
        logLevel: "silent",
      });
      return out;
    })();
    bundles.set(name, bundled);
  }
  return bundled;
}
