// Assembles the image's /app from a built workspace: the `openrath` command's production
// dependencies (`pnpm deploy`, from the workspace lockfile) plus @openrath/core. Core is every
// package's peer dependency, so `pnpm deploy --prod` leaves it out; it has no dependencies of its
// own, and one copy at the top of node_modules is the one every package resolves.
// Usage: node deploy/image/assemble.mjs <out dir> [--offline]
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * Writes the app tree to `out` (replacing it). The workspace must be built (`turbo run build`).
 * @param {string} out
 * @param {{ offline?: boolean }} [options]
 */
export function assembleApp(out, { offline = false } = {}) {
  for (const pkg of ["cli", "core"]) {
    if (!existsSync(join(ROOT, "packages", pkg, "dist")))
      throw new Error(
        `packages/${pkg} is not built: run \`pnpm exec turbo run build --filter @openrath/cli...\``,
      );
  }
  rmSync(out, { recursive: true, force: true });
  execFileSync(
    "pnpm",
    [
      "--config.inject-workspace-packages=true",
      "--filter",
      "@openrath/cli",
      "deploy",
      "--prod",
      ...(offline ? ["--offline"] : []),
      out,
    ],
    { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"] },
  );
  const core = join(out, "node_modules", "@openrath", "core");
  mkdirSync(core, { recursive: true });
  for (const entry of ["package.json", "dist", "LICENSE"]) {
    const from = join(ROOT, "packages", "core", entry);
    if (existsSync(from)) cpSync(from, join(core, entry), { recursive: true });
  }
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = process.argv[2];
  if (!out) {
    process.stderr.write("usage: node deploy/image/assemble.mjs <out dir> [--offline]\n");
    process.exit(2);
  }
  assembleApp(resolve(out), { offline: process.argv.includes("--offline") });
}
