import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Bundles `src/internal/<name>.ts` with esbuild from the packages' sources into one file under
 * `node_modules/.openrath-bench/<name>.mjs`, so a child process the bench forks (or restarts)
 * costs a Node start, not a compile of every source file. Returns the file's path.
 */
export async function bundleInternal(name: string): Promise<string> {
  const { build } = await import("esbuild");
  const internal = fileURLToPath(new URL(".", import.meta.url));
  const dir = join(internal, "..", "..", "node_modules", ".openrath-bench");
  mkdirSync(dir, { recursive: true });
  const out = join(dir, `${name}.mjs`);
  await build({
    entryPoints: [join(internal, `${name}.ts`)],
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
}
