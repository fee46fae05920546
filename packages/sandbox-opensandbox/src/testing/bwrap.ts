import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { lstatSync, readdirSync, readlinkSync } from "node:fs";
import type { Mount } from "./sandbox-fs.js";

/** Paths of the host root that the sandbox gets fresh instead of bound read-only. */
const FRESH = new Set(["proc", "dev", "tmp"]);

/**
 * The bubblewrap arguments that build the fake sandbox's root: the brief's
 * `--ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind <dir> /workspace`, except that `/`
 * is a tmpfs holding read-only binds of every host top-level entry. `--ro-bind / /` cannot host a
 * mount point that does not exist on the host (`/workspace` usually does not), and creating one
 * on the host is not the fake's business. The root is remounted read-only at the end, so the
 * sandbox writes only to its mounts.
 */
export function rootArgs(mounts: readonly Mount[]): string[] {
  const args = ["--tmpfs", "/"];
  const mountRoots = new Set(
    mounts.filter((m) => m.path.split("/").length === 2).map((m) => m.path.slice(1)),
  );
  for (const name of readdirSync("/")) {
    if (FRESH.has(name) || mountRoots.has(name)) continue;
    const path = `/${name}`;
    let stats: ReturnType<typeof lstatSync>;
    try {
      stats = lstatSync(path);
    } catch {
      continue;
    }
    if (stats.isSymbolicLink()) args.push("--symlink", readlinkSync(path), path);
    else if (stats.isDirectory() || stats.isFile()) args.push("--ro-bind", path, path);
  }
  args.push("--dev", "/dev", "--proc", "/proc");
  for (const mount of [...mounts].sort((a, b) => a.path.length - b.path.length)) {
    args.push("--bind", mount.host, mount.path);
  }
  if (!mounts.some((m) => m.path === "/tmp")) args.push("--tmpfs", "/tmp");
  args.push("--remount-ro", "/");
  return args;
}

/** Options of {@link spawnInSandbox}. */
export interface SandboxSpawnOptions {
  readonly mounts: readonly Mount[];
  readonly cwd: string;
  readonly env: Record<string, string>;
  /** Extra stdio slots beyond stdin/stdout/stderr (the code runner reads results from fd 3). */
  readonly extraFds?: number;
  readonly stdin?: "pipe" | "ignore";
}

/**
 * Runs `argv` isolated the way the brief asks: every namespace unshared (so no network), a new
 * session, killed with its parent. The child leads its own process group on the host, so killing
 * `-pid` takes bubblewrap down and with it the sandbox's whole PID namespace.
 */
export function spawnInSandbox(argv: readonly string[], options: SandboxSpawnOptions): ChildProcess {
  const args = [
    "--die-with-parent",
    "--unshare-all",
    "--new-session",
    ...rootArgs(options.mounts),
    "--chdir",
    options.cwd,
    "--",
    ...argv,
  ];
  const stdio: ("pipe" | "ignore")[] = [options.stdin ?? "ignore", "pipe", "pipe"];
  for (let i = 0; i < (options.extraFds ?? 0); i++) stdio.push("pipe");
  return spawn("bwrap", args, { stdio, env: options.env, detached: true });
}

/**
 * Whether this host can run the fake's sandboxes: bubblewrap installed and allowed to create
 * the namespaces (containers without user namespaces cannot).
 */
export function bwrapWorks(): boolean {
  const probe = spawnSync(
    "bwrap",
    ["--die-with-parent", "--unshare-all", "--new-session", ...rootArgs([]), "true"],
    {
      stdio: "ignore",
      timeout: 10_000,
    },
  );
  return probe.status === 0;
}
