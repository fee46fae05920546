import { lstatSync, readdirSync, readFileSync, readlinkSync, type Stats, statSync } from "node:fs";
import { posix } from "node:path";

/** A host directory bound into the fake sandbox at `path`. */
export interface Mount {
  /** Absolute path inside the sandbox, such as `/workspace`. */
  readonly path: string;
  /** Host directory behind it. */
  readonly host: string;
}

/** Where a sandbox path lives on the host. */
export interface Resolved {
  /** The path inside the sandbox, symlinks resolved as far as they exist. */
  readonly path: string;
  /** The host path to operate on. */
  readonly host: string;
  /** Whether it lies in a writable mount (everything else is the read-only host root). */
  readonly writable: boolean;
}

/** An `ENOENT`, `ELOOP`, `ENOTDIR` or `EROFS` error like Node's own. */
export function fsError(code: string, message: string): NodeJS.ErrnoException {
  const error = new Error(`${code}: ${message}`) as NodeJS.ErrnoException;
  error.code = code;
  return error;
}

/**
 * The file system as the fake sandbox sees it: writable host directories bound at a few
 * absolute paths (the workspace and `/tmp`), and the host root read-only everywhere else, as the
 * bubblewrap command line sets it up. Paths resolve symlinks in the sandbox's view, so a link to
 * `/workspace/x` made inside the sandbox works for the file endpoints too.
 */
export class SandboxFs {
  constructor(readonly mounts: readonly Mount[]) {}

  /** The host path of a sandbox path whose symlinks are already resolved. */
  hostPath(path: string): { host: string; writable: boolean } {
    let best: Mount | undefined;
    for (const mount of this.mounts) {
      if (path === mount.path || path.startsWith(`${mount.path}/`)) {
        if (!best || mount.path.length > best.path.length) best = mount;
      }
    }
    if (!best) return { host: path, writable: false };
    return { host: best.host + path.slice(best.path.length), writable: true };
  }

  /**
   * Resolves a sandbox path component by component. Missing components are kept as they are
   * (callers creating files need that). With `followLast: false` a final symlink is not followed
   * (`lstat` semantics).
   */
  resolve(path: string, followLast = true, cwd = "/"): Resolved {
    const pending = posix.resolve(cwd, path).split("/").filter(Boolean);
    const done: string[] = [];
    let hops = 0;
    let missing = false;
    while (pending.length > 0) {
      const part = pending.shift()!;
      if (part === "." || part === "") continue;
      if (part === "..") {
        done.pop();
        continue;
      }
      if (missing) {
        done.push(part);
        continue;
      }
      const candidate = `/${[...done, part].join("/")}`;
      const { host } = this.hostPath(candidate);
      let stats: Stats;
      try {
        stats = lstatSync(host);
      } catch {
        missing = true;
        done.push(part);
        continue;
      }
      if (stats.isSymbolicLink() && (pending.length > 0 || followLast)) {
        if (++hops > 40) throw fsError("ELOOP", `too many levels of symbolic links: ${path}`);
        const target = readlinkSync(host);
        const targetParts = target.split("/").filter(Boolean);
        if (target.startsWith("/")) done.length = 0;
        pending.unshift(...targetParts);
        continue;
      }
      if (!stats.isDirectory() && pending.length > 0) {
        throw fsError("ENOTDIR", `not a directory: ${candidate}`);
      }
      done.push(part);
    }
    const resolved = `/${done.join("/")}`;
    return { path: resolved, ...this.hostPath(resolved) };
  }

  /** `os.Stat` in the sandbox: follows symlinks. */
  stat(path: string, cwd = "/"): { resolved: Resolved; stats: Stats } {
    const resolved = this.resolve(path, true, cwd);
    return { resolved, stats: statSync(resolved.host) };
  }

  /** `os.Lstat` in the sandbox. */
  lstat(path: string, cwd = "/"): { resolved: Resolved; stats: Stats } {
    const resolved = this.resolve(path, false, cwd);
    return { resolved, stats: lstatSync(resolved.host) };
  }

  /** Resolves a path that is about to be written, refusing the read-only part of the tree. */
  writable(path: string, cwd = "/"): Resolved {
    const resolved = this.resolve(path, true, cwd);
    if (!resolved.writable) throw fsError("EROFS", `read-only file system: ${resolved.path}`);
    return resolved;
  }

  /** Lists a directory's entries in lexical order (Go's `os.ReadDir`). */
  readDir(resolved: Resolved): string[] {
    return readdirSync(resolved.host).sort();
  }
}

let users: Map<number, string> | undefined;
let groups: Map<number, string> | undefined;

function idNames(file: string): Map<number, string> {
  const names = new Map<number, string>();
  try {
    for (const line of readFileSync(file, "utf8").split("\n")) {
      const [name, , id] = line.split(":");
      if (name && id && !names.has(Number(id))) names.set(Number(id), name);
    }
  } catch {
    // No passwd/group file: owners come back numeric, as execd does when a lookup fails.
  }
  return names;
}

/** The user name for a uid (numeric when unknown), as execd's `user.LookupId` fallback does. */
export function userName(uid: number): string {
  users ??= idNames("/etc/passwd");
  return users.get(uid) ?? String(uid);
}

/** The group name for a gid. */
export function groupName(gid: number): string {
  groups ??= idNames("/etc/group");
  return groups.get(gid) ?? String(gid);
}

/** execd's `FileInfo`: `mode` is the permission bits written as octal digits in a decimal number. */
export function fileInfo(path: string, stats: Stats): Record<string, unknown> {
  const type = stats.isSymbolicLink()
    ? "symlink"
    : stats.isDirectory()
      ? "directory"
      : stats.isFile()
        ? "file"
        : "other";
  return {
    path,
    type,
    size: stats.size,
    modified_at: stats.mtime.toISOString(),
    created_at: (stats.birthtimeMs > 0 ? stats.birthtime : stats.ctime).toISOString(),
    owner: userName(stats.uid),
    group: groupName(stats.gid),
    mode: Number((stats.mode & 0o777).toString(8)),
  };
}
