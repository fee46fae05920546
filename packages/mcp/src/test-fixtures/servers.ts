import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);

/** Absolute path of an installed package's bin script (read from its package.json). */
function binOf(pkg: string): string {
  const manifestPath = require.resolve(`${pkg}/package.json`);
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as { bin: string | Record<string, string> };
  const bin = typeof manifest.bin === "string" ? manifest.bin : Object.values(manifest.bin)[0]!;
  return join(dirname(manifestPath), bin);
}

/** Entry of `@modelcontextprotocol/server-everything` (arg: stdio | streamableHttp). */
export const EVERYTHING_BIN = binOf("@modelcontextprotocol/server-everything");
/** Entry of `@modelcontextprotocol/server-filesystem` (args: allowed directories). */
export const FILESYSTEM_BIN = binOf("@modelcontextprotocol/server-filesystem");

/** This package's directory (cwd for fixture scripts run through tsx). */
export const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** Node arguments that run a TypeScript fixture with workspace packages resolved to their sources. */
export function tsxArgs(script: string): string[] {
  return [
    "--conditions=@openrath/source",
    "--import",
    "tsx",
    join(PACKAGE_DIR, "src", "test-fixtures", script),
  ];
}

/** A preload that makes servers calling `listen(port)` bind 127.0.0.1 instead of every interface. */
export const LOOPBACK_PRELOAD = join(PACKAGE_DIR, "src", "test-fixtures", "loopback-only.mjs");

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

/**
 * Pids of live processes whose parent is this process and whose command line contains `needle`
 * (Linux `/proc`). Zombies are skipped.
 */
export function childProcesses(needle: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const state = fields[0];
      const ppid = Number(fields[1]);
      if (ppid !== process.pid || state === "Z") continue;
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ");
      if (cmdline.includes(needle)) out.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return out;
}

/** Whether `/proc` is there to count processes. */
export function canCountProcesses(): boolean {
  return existsSync("/proc/self/stat");
}
