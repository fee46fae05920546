import type { ExecResult, FileEntry } from "@openrath/core";
import { SandboxError } from "@openrath/core";
import { checkWriteData, confinePath, decodeTextFile, outside } from "@openrath/core/backend";
import type { RunOptions } from "./commands.js";
import { remoteFailure } from "./errors.js";
import type { ExecdStack } from "./sdk.js";
import { shellQuote } from "./shell.js";

/** `depth` of a recursive `/directories/list`. */
const RECURSIVE_DEPTH = 4096;

/** What {@link RemoteFiles} works through. */
export interface RemoteFilesParts {
  readonly sandboxId: string;
  /** The workspace as the sandbox names it. */
  readonly workspace: string;
  /** The workspace with symlinks resolved (known once the sandbox is initialized). */
  realWorkspace(): string;
  /** The SDK's execd file services. */
  readonly execd: ExecdStack;
  /** Runs a shell line through execd (for symlink resolution). */
  runCommand(line: string, options: RunOptions): Promise<ExecResult>;
  /** Maps a failed call to a sandbox error. */
  failure(error: unknown, what: string): SandboxError;
}

/**
 * The file operations of an OpenSandbox sandbox: every path confined to the workspace, symlinks
 * resolved inside the sandbox, then the SDK's execd file calls on the resolved path.
 */
export class RemoteFiles {
  constructor(private readonly p: RemoteFilesParts) {}

  async readFile(path: string, options?: { readonly encoding?: "utf8" }): Promise<string>;
  async readFile(path: string, options: { readonly encoding: "bytes" }): Promise<Uint8Array>;
  async readFile(
    path: string,
    options: { readonly encoding?: "utf8" | "bytes" } = {},
  ): Promise<string | Uint8Array> {
    const rel = confinePath(path, this.p.workspace);
    const target = await this.resolve(rel, path);
    if (target.type === "missing") throw notFound(path, this.p.workspace);
    if (target.type !== "file") {
      throw new SandboxError(
        "not_a_file",
        `Cannot read ${path}: it is a ${target.type === "directory" ? "directory" : "special file"}, not a regular file. Use listFiles for directories.`,
        { details: { path, type: target.type } },
      );
    }
    let bytes: Uint8Array;
    try {
      bytes = await this.p.execd.files.readBytes(target.path);
    } catch (error) {
      if (remoteFailure(error).status === 404) throw notFound(path, this.p.workspace);
      throw this.p.failure(error, `Reading ${path}`);
    }
    return options.encoding === "bytes" ? bytes : decodeTextFile(bytes, path);
  }

  async writeFile(path: string, data: string | Uint8Array): Promise<{ readonly bytesWritten: number }> {
    checkWriteData(data, path);
    const rel = confinePath(path, this.p.workspace);
    if (rel === ".") throw notAFile(path, "the workspace root is a directory");
    const target = await this.resolve(rel, path);
    if (target.type === "directory") throw notAFile(path, "it is a directory");
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    try {
      await this.p.execd.files.writeFiles([{ path: target.path, data: bytes }]);
    } catch (error) {
      const failure = remoteFailure(error);
      if (/not a directory/i.test(failure.message)) {
        throw new SandboxError(
          "not_a_directory",
          `Cannot write ${path}: one of its parent paths is a file, not a directory.`,
          { cause: error, details: { path } },
        );
      }
      throw this.p.failure(error, `Writing ${path}`);
    }
    return { bytesWritten: bytes.length };
  }

  async listFiles(path = ".", options: { readonly recursive?: boolean } = {}): Promise<FileEntry[]> {
    const rel = confinePath(path, this.p.workspace);
    const target =
      rel === "." ? { path: this.p.realWorkspace(), type: "directory" } : await this.resolve(rel, path);
    if (target.type === "missing") throw notFound(path, this.p.workspace);
    if (target.type !== "directory") {
      throw new SandboxError("not_a_directory", `Cannot list ${path}: it is not a directory.`, {
        details: { path, type: target.type },
      });
    }
    const recursive = options.recursive === true;
    const prefix = rel === "." ? "" : `${rel}/`;
    const entries = new Map<string, FileEntry>();
    const add = (relative: string, type: FileEntry["type"], size: number) => {
      const name = relative.slice(relative.lastIndexOf("/") + 1);
      entries.set(relative, { name, path: prefix + relative, type, size });
    };
    const under = (full: string) =>
      full.startsWith(`${target.path}/`) ? full.slice(target.path.length + 1) : undefined;
    try {
      const infos = await this.p.execd.files.listDirectory({
        path: target.path,
        depth: recursive ? RECURSIVE_DEPTH : 1,
      });
      for (const info of infos) {
        const relative = under(info.path);
        if (relative) add(relative, entryType(info.type), info.type === "directory" ? 0 : (info.size ?? 0));
      }
    } catch (error) {
      const failure = remoteFailure(error);
      if (failure.status === 404 && failure.code === "FILE_NOT_FOUND") throw notFound(path, this.p.workspace);
      if (failure.status !== 404) throw this.p.failure(error, `Listing ${path}`);
      // execd before v1.0.19 has no /directories/list (gin answers its plain 404): search instead.
      // Search reports files only, so directories are inferred from file paths and empty ones are missed.
      let files: { path: string; type?: string; size?: number }[];
      try {
        files = await this.p.execd.files.search({ path: target.path, pattern: "**" });
      } catch (searchError) {
        if (remoteFailure(searchError).status === 404) throw notFound(path, this.p.workspace);
        throw this.p.failure(searchError, `Listing ${path}`);
      }
      for (const file of files) {
        const relative = under(file.path);
        if (!relative) continue;
        const parts = relative.split("/");
        if (!recursive && parts.length > 1) {
          add(parts[0]!, "directory", 0);
          continue;
        }
        for (let i = 1; i < parts.length; i++) add(parts.slice(0, i).join("/"), "directory", 0);
        add(relative, entryType(file.type), file.size ?? 0);
      }
    }
    return [...entries.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  async exists(path: string): Promise<boolean> {
    const rel = confinePath(path, this.p.workspace);
    const target = rel === "." ? { path: this.p.realWorkspace() } : await this.resolve(rel, path);
    try {
      await this.p.execd.files.getFileInfo([target.path]);
      return true;
    } catch (error) {
      if (remoteFailure(error).status === 404) return false;
      throw this.p.failure(error, `Checking ${path}`);
    }
  }

  /** The working directory for `cwd`, confined and checked to be a directory. */
  async directory(cwd: string): Promise<string> {
    const rel = confinePath(cwd, this.p.workspace);
    if (rel === ".") return this.p.workspace;
    const target = await this.resolve(rel, cwd);
    if (target.type === "missing") {
      throw new SandboxError(
        "file_not_found",
        `The working directory ${cwd} does not exist in the workspace ${this.p.workspace}. Create it first (writeFile creates parents) or pass an existing cwd.`,
        { details: { path: cwd } },
      );
    }
    if (target.type !== "directory") {
      throw new SandboxError("not_a_directory", `The working directory ${cwd} is not a directory.`, {
        details: { path: cwd },
      });
    }
    return target.path;
  }

  /**
   * Resolves a confined relative path inside the sandbox (`realpath -m`: every symlink, existing
   * or not) and refuses one that leaves the workspace. Only the sandbox can see its symlinks, so
   * this costs one command; the file calls then use the resolved path.
   */
  async resolve(rel: string, original: string): Promise<{ path: string; type: string }> {
    const abs = shellQuote(`${this.p.workspace}/${rel}`);
    const script =
      `p=$(${realpathOf(abs)}) || exit 3; ` +
      `if [ -d "$p" ]; then t=directory; elif [ -f "$p" ]; then t=file; elif [ -e "$p" ]; then t=other; else t=missing; fi; ` +
      `printf '%s\\n%s\\n' "$t" "$p"`;
    const result = await this.p.runCommand(`( ${script} )`, {
      cwd: "/",
      timeoutMs: 60_000,
      what: `Resolving ${original}`,
    });
    const newline = result.stdout.indexOf("\n");
    const type = result.stdout.slice(0, newline);
    const real = result.stdout.slice(newline + 1).replace(/\n$/, "");
    if (result.exitCode !== 0 || newline < 0 || !real.startsWith("/")) {
      throw new SandboxError(
        "sandbox_remote_error",
        `Could not resolve ${original} inside OpenSandbox sandbox ${this.p.sandboxId}: the image needs GNU realpath or readlink (with -m) or python3 to check symlinks (exit code ${result.exitCode}: ${result.stderr.trim() || "no output"}).`,
        { details: { path: original, exitCode: result.exitCode, stderr: result.stderr } },
      );
    }
    if (real !== this.p.realWorkspace() && !real.startsWith(`${this.p.realWorkspace()}/`)) {
      throw outside(original, this.p.workspace);
    }
    return { path: real, type };
  }
}

/**
 * A shell snippet printing the canonical path of `quoted` (a shell-quoted absolute path) with every
 * symlink resolved, whether or not the path exists: GNU `realpath -m`, else `readlink -m`, else
 * Python's `os.path.realpath` (busybox images have neither `-m`).
 */
export function realpathOf(quoted: string): string {
  return (
    `{ realpath -m -- ${quoted} 2>/dev/null || readlink -m -- ${quoted} 2>/dev/null || ` +
    `python3 -c 'import os, sys; print(os.path.realpath(sys.argv[1]))' ${quoted} 2>/dev/null; }`
  );
}

function entryType(type: string | undefined): FileEntry["type"] {
  return type === "directory" || type === "symlink" || type === "other" ? type : "file";
}

function notFound(path: string, workspace: string): SandboxError {
  return new SandboxError("file_not_found", `${path} does not exist in the workspace ${workspace}.`, {
    details: { path },
  });
}

function notAFile(path: string, why: string): SandboxError {
  return new SandboxError("not_a_file", `Cannot write ${path}: ${why}.`, { details: { path } });
}
