import { constants } from "node:fs";
import { type FileHandle, lstat, open, readdir, readlink } from "node:fs/promises";
import { type FileEntry, SandboxError } from "@openrath/core";
import { checkWriteData, decodeTextFile } from "@openrath/core/backend";
import { DIRECTORY_FLAGS, errnoOf, handlePath, Walk, type WorkspaceRoot } from "./workspace-walk.js";

export { errnoOf };

const { O_CREAT, O_NOFOLLOW, O_NONBLOCK, O_RDONLY, O_WRONLY } = constants;
const READ_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK;
const WRITE_FLAGS = O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK;

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

/** A path inside the workspace, as {@link WorkspaceFiles.directory} resolves it. */
export interface WorkspacePath {
  /** Relative to the workspace root, `/`-separated, `.` for the root. */
  readonly rel: string;
  /** The host path it reaches once every symlink on the way is followed. */
  readonly real: string;
}

/**
 * The file operations of a local sandbox. Every path is walked from a handle on the workspace
 * root one component at a time, never through a symlink the kernel follows (see {@link Walk} and
 * ADR 0024): code in the sandbox may swap a directory for a link to a host directory while a call
 * runs, and the call still only reads or writes inside the workspace. Links that stay inside are
 * followed; errors map to the contract's codes. The host's file system is the sandbox's in both
 * modes (the workspace is bound at its real path under bubblewrap).
 */
export class WorkspaceFiles {
  constructor(private readonly root: WorkspaceRoot) {}

  readFile(path: string, options?: { readonly encoding?: "utf8" }): Promise<string>;
  readFile(path: string, options: { readonly encoding: "bytes" }): Promise<Uint8Array>;
  async readFile(
    path: string,
    options: { readonly encoding?: "utf8" | "bytes" } = {},
  ): Promise<string | Uint8Array> {
    const bytes = await this.withFinal(path, false, READ_FLAGS, "file_not_found", async (file) => {
      if (!(await file.stat()).isFile()) throw fileError("not_a_file", path);
      return file.readFile();
    });
    return options.encoding === "bytes" ? new Uint8Array(bytes) : decodeTextFile(bytes, path);
  }

  async writeFile(path: string, data: string | Uint8Array): Promise<{ readonly bytesWritten: number }> {
    checkWriteData(data, path);
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    await this.withFinal(path, true, WRITE_FLAGS, "not_a_directory", async (file) => {
      if (!(await file.stat()).isFile()) throw fileError("not_a_file", path);
      await file.truncate(0);
      await file.writeFile(bytes);
    });
    return { bytesWritten: bytes.byteLength };
  }

  async listFiles(path = ".", options: { readonly recursive?: boolean } = {}): Promise<FileEntry[]> {
    const entries: FileEntry[] = [];
    const walk = await this.walkTo(path, "file_not_found", true);
    try {
      await list(walk.dirPath, walk.rel, options.recursive === true, entries);
    } catch (error) {
      throw mapFsError(error, path, "not_a_directory");
    } finally {
      await walk.close();
    }
    return entries;
  }

  async exists(path: string): Promise<boolean> {
    let walk: Walk;
    try {
      walk = await Walk.start(this.root, path);
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
    try {
      while (walk.name !== "") {
        let target: string;
        try {
          target = await readlink(walk.child(walk.name));
        } catch (error) {
          if (errnoOf(error) === "EINVAL") return true; // there, and not a link
          throw error;
        }
        await walk.follow(target);
      }
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    } finally {
      await walk.close();
    }
  }

  /**
   * The directory at `path` (links followed, confined): the working directory of a command.
   *
   * @throws {SandboxError} `path_outside_workspace`, `file_not_found`, `not_a_directory`.
   */
  async directory(path: string): Promise<WorkspacePath> {
    const walk = await this.walkTo(path, "file_not_found", true);
    try {
      return { rel: walk.rel, real: await walk.realDirPath() };
    } finally {
      await walk.close();
    }
  }

  /** Walks to `path`; with `enter`, into it as a directory. Errno errors are mapped. */
  private async walkTo(
    path: string,
    missing: "file_not_found" | "not_a_directory",
    enter = false,
    create = false,
  ): Promise<Walk> {
    let walk: Walk;
    try {
      walk = await Walk.start(this.root, path, create);
    } catch (error) {
      throw mapFsError(error, path, missing);
    }
    if (!enter) return walk;
    try {
      await walk.enter();
    } catch (error) {
      await walk.close();
      throw mapFsError(error, path, "not_a_directory");
    }
    return walk;
  }

  /** Opens the file at `path` with `flags` (links followed, confined) and hands it to `use`. */
  private async withFinal<T>(
    path: string,
    create: boolean,
    flags: number,
    missing: "file_not_found" | "not_a_directory",
    use: (file: FileHandle) => Promise<T>,
  ): Promise<T> {
    const walk = await this.walkTo(path, missing, false, create);
    let file: FileHandle | undefined;
    try {
      file = await walk.open(flags, 0o666);
      return await use(file);
    } catch (error) {
      throw mapFsError(error, path, missing);
    } finally {
      await file?.close();
      await walk.close();
    }
  }
}

function isMissing(error: unknown): boolean {
  const code = errnoOf(error);
  return code === "ENOENT" || code === "ENOTDIR";
}

/**
 * Lists the directory at `dirPath` (a path through a handle) into `entries`, depth-first by name;
 * subdirectories are opened without following links, so a directory swapped for a link while
 * listing is listed no further.
 */
async function list(
  dirPath: string,
  prefix: string,
  recursive: boolean,
  entries: FileEntry[],
): Promise<void> {
  const dirents = (await readdir(dirPath, { withFileTypes: true })).sort(byName);
  for (const dirent of dirents) {
    const entryPath = prefix === "." ? dirent.name : `${prefix}/${dirent.name}`;
    const childPath = `${dirPath}/${dirent.name}`;
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
        size = (await lstat(childPath)).size;
      } catch {
        continue; // deleted while listing
      }
    }
    entries.push({ name: dirent.name, path: entryPath, type, size });
    if (!recursive || type !== "directory") continue;
    let sub: FileHandle;
    try {
      sub = await open(childPath, DIRECTORY_FLAGS);
    } catch {
      continue; // removed, made unreadable or swapped for a link while listing: not descended
    }
    try {
      await list(handlePath(sub, childPath), entryPath, recursive, entries);
    } catch (error) {
      if (errnoOf(error) === undefined) throw error;
    } finally {
      await sub.close();
    }
  }
}
