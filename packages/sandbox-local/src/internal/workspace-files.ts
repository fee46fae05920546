import { lstat, mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type FileEntry, SandboxError } from "@openrath/core";
import { checkWriteData, decodeTextFile } from "@openrath/core/backend";
import { resolveInWorkspace, type WorkspacePath, type WorkspaceRoot } from "./resolve-in-workspace.js";

export function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

export function fileError(
  code: "file_not_found" | "not_a_file" | "not_a_directory",
  path: string,
  cause?: unknown,
) {
  const message = {
    file_not_found: `No file or directory at ${JSON.stringify(path)} in the sandbox workspace. Check the path (relative to the workspace root) with listFiles().`,
    not_a_file: `${JSON.stringify(path)} is not a regular file (a directory or a special file). Use listFiles() for directories.`,
    not_a_directory: `${JSON.stringify(path)} (or one of its parents) is not a directory.`,
  }[code];
  return new SandboxError(code, message, { cause, details: { path } });
}

/** Maps a file-system error to the contract's codes; anything unexpected is rethrown as it is. */
export function mapFsError(
  error: unknown,
  path: string,
  missing: "file_not_found" | "not_a_directory",
): unknown {
  if (SandboxError.isInstance(error)) return error;
  switch (errnoOf(error)) {
    case "ENOENT":
      return fileError("file_not_found", path, error);
    case "ENOTDIR":
      return fileError(missing, path, error);
    case "EISDIR":
      return fileError("not_a_file", path, error);
    default:
      return error;
  }
}

/**
 * The file operations of a local sandbox: paths confined to the workspace (symlinks included, see
 * {@link resolveInWorkspace}), errors mapped to the contract's codes. The host's file system is
 * the sandbox's in both modes (the workspace is bound at its real path under bubblewrap).
 */
export class WorkspaceFiles {
  constructor(private readonly root: WorkspaceRoot) {}

  /** Confines `path` and follows its symlinks; see {@link resolveInWorkspace}. */
  resolve(path: string): Promise<WorkspacePath> {
    return resolveInWorkspace(path, this.root);
  }

  readFile(path: string, options?: { readonly encoding?: "utf8" }): Promise<string>;
  readFile(path: string, options: { readonly encoding: "bytes" }): Promise<Uint8Array>;
  async readFile(
    path: string,
    options: { readonly encoding?: "utf8" | "bytes" } = {},
  ): Promise<string | Uint8Array> {
    const { real } = await this.resolve(path);
    let bytes: Buffer;
    try {
      if (!(await stat(real)).isFile()) throw fileError("not_a_file", path);
      bytes = await readFile(real);
    } catch (error) {
      throw mapFsError(error, path, "file_not_found");
    }
    return options.encoding === "bytes" ? new Uint8Array(bytes) : decodeTextFile(bytes, path);
  }

  async writeFile(path: string, data: string | Uint8Array): Promise<{ readonly bytesWritten: number }> {
    checkWriteData(data, path);
    const { rel, real } = await this.resolve(path);
    if (rel === ".") throw fileError("not_a_file", path);
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    try {
      await mkdir(dirname(real), { recursive: true });
    } catch (error) {
      const code = errnoOf(error);
      if (code === "EEXIST" || code === "ENOTDIR") throw fileError("not_a_directory", path, error);
      throw error;
    }
    try {
      await writeFile(real, bytes);
    } catch (error) {
      throw mapFsError(error, path, "not_a_directory");
    }
    return { bytesWritten: bytes.byteLength };
  }

  async listFiles(path = ".", options: { readonly recursive?: boolean } = {}): Promise<FileEntry[]> {
    const { rel, real } = await this.resolve(path);
    try {
      if (!(await stat(real)).isDirectory()) throw fileError("not_a_directory", path);
    } catch (error) {
      throw mapFsError(error, path, "file_not_found");
    }
    const entries: FileEntry[] = [];
    const walk = async (dir: string, prefix: string): Promise<void> => {
      const dirents = (await readdir(dir, { withFileTypes: true })).sort(byName);
      for (const dirent of dirents) {
        const entryPath = prefix === "." ? dirent.name : `${prefix}/${dirent.name}`;
        const hostPath = join(dir, dirent.name);
        const type = dirent.isDirectory()
          ? "directory"
          : dirent.isFile()
            ? "file"
            : dirent.isSymbolicLink()
              ? "symlink"
              : "other";
        let size = 0;
        if (type !== "directory") {
          try {
            size = (await lstat(hostPath)).size;
          } catch {
            continue; // deleted while listing
          }
        }
        entries.push({ name: dirent.name, path: entryPath, type, size });
        if (options.recursive && type === "directory") {
          await walk(hostPath, entryPath).catch((error) => {
            // A directory removed (or made unreadable) while listing is left out, not fatal.
            if (errnoOf(error) === undefined) throw error;
          });
        }
      }
    };
    try {
      await walk(real, rel);
    } catch (error) {
      throw mapFsError(error, path, "not_a_directory");
    }
    return entries;
  }

  async exists(path: string): Promise<boolean> {
    const { real } = await this.resolve(path);
    try {
      await lstat(real);
      return true;
    } catch {
      return false;
    }
  }
}
