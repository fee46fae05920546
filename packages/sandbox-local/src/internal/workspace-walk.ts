import { constants, existsSync } from "node:fs";
import { type FileHandle, mkdir, open, readlink } from "node:fs/promises";
import { SandboxError } from "@openrath/core";
import { confinePath, outside } from "@openrath/core/backend";

const { O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_RDONLY } = constants;

/** Flags of a directory step: never through a symlink (the walk follows those itself). */
export const DIRECTORY_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK;

/** A workspace root: the path the sandbox reports, the same directory's real path, and a handle on it. */
export interface WorkspaceRoot {
  readonly path: string;
  readonly real: string;
  /** The root directory, open for the sandbox's life: every walk starts from it, not from a path. */
  readonly handle: FileHandle;
}

/** Symlinks followed before giving up, as the kernel does (ELOOP). */
const MAX_LINKS = 40;

/**
 * Whether `/proc/self/fd/N/name` names `name` in the directory open as fd N: then a step needs
 * no path the sandbox could change under it (Node has no `openat`).
 */
const HANDLE_PATHS = existsSync("/proc/self/fd");

/** A path naming the directory open as `handle` (through the handle where `/proc` allows, else `path`). */
export function handlePath(handle: FileHandle, path: string): string {
  return HANDLE_PATHS ? `/proc/self/fd/${handle.fd}` : path;
}

interface Step {
  readonly handle: FileHandle;
  /** The host path it had when opened (for messages, and where there is no `/proc/self/fd`). */
  readonly path: string;
}

export function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * A path walked inside the workspace one component at a time, from a handle on the root and then
 * on each directory reached, each opened without following a symlink (see ADR 0024). Symlinks are
 * followed by the walk itself: a relative target from the directory holding the link, an absolute
 * one only when it names the workspace (by its reported or its real path); a target that climbs
 * above the root is `path_outside_workspace`. Code in the sandbox can swap any directory for a
 * link between two steps: the next step then either goes into the directory it held open or sees
 * the link and confines it, never a host directory. It ends at {@link Walk.dir} and the final
 * name in it, which the caller opens with {@link Walk.open} (or looks at) — without following a
 * link there either. Close it with {@link Walk.close}.
 */
export class Walk {
  private readonly steps: Step[];
  private links = 0;
  /** The final component, in {@link Walk.dir}; `""` when the walk ended at a directory itself. */
  name = "";

  private constructor(
    private readonly root: WorkspaceRoot,
    /** The path as the caller gave it (for messages). */
    readonly path: string,
    /** The path relative to the workspace root, lexically normalized (`.` for the root). */
    readonly rel: string,
    private readonly create: boolean,
  ) {
    this.steps = [{ handle: root.handle, path: root.real }];
  }

  /**
   * Confines `path` lexically (through `..` and absolute paths, by `confinePath`; an absolute path
   * may name the root by its reported or its real path), then walks to its parent directory.
   * With `create`, missing directories on the way are made.
   *
   * @throws {SandboxError} `path_outside_workspace`, `invalid_argument`; errno errors (`ENOENT`,
   *   `ENOTDIR`) for the caller to map.
   */
  static async start(root: WorkspaceRoot, path: string, create = false): Promise<Walk> {
    let rel: string;
    try {
      rel = confinePath(path, root.path);
    } catch (error) {
      if (root.real === root.path || !SandboxError.isInstance(error, "path_outside_workspace")) throw error;
      rel = confinePath(path, root.real);
    }
    const walk = new Walk(root, path, rel, create);
    try {
      await walk.walk(rel === "." ? [] : rel.split("/"));
    } catch (error) {
      await walk.close();
      throw error;
    }
    return walk;
  }

  /** The directory the walk is in. */
  get dir(): FileHandle {
    return this.steps.at(-1)!.handle;
  }

  /** A path naming the directory the walk is in: through its handle where `/proc` allows. */
  get dirPath(): string {
    const top = this.steps.at(-1)!;
    return handlePath(top.handle, top.path);
  }

  /** A path naming `name` in the directory the walk is in. */
  child(name: string): string {
    return `${this.dirPath}/${name}`;
  }

  /** The real host path of the directory the walk is in (where it is now, if it moved). */
  async realDirPath(): Promise<string> {
    return HANDLE_PATHS ? readlink(this.dirPath) : this.steps.at(-1)!.path;
  }

  /**
   * Opens the final name with `flags` (which must hold `O_NOFOLLOW`), following a symlink there
   * by walking its target. The caller closes the handle.
   *
   * @throws errno errors: `EISDIR` when the walk ended at a directory itself, and what `open` says.
   */
  async open(flags: number, mode?: number): Promise<FileHandle> {
    for (;;) {
      if (this.name === "") throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
      const opened = await this.openOrReadLink(this.name, flags, mode);
      if (typeof opened !== "string") return opened;
      await this.follow(opened);
    }
  }

  /** Moves the walk into the final name (which must be a directory, links followed): `dir` is then it. */
  async enter(): Promise<void> {
    if (this.name === "") return;
    const name = this.name;
    this.name = "";
    await this.walk([name, "."]);
  }

  /** The final name turned out to be a symlink to `target`: walks it, and its last name is the final one. */
  async follow(target: string): Promise<void> {
    if (++this.links > MAX_LINKS) throw this.loop();
    await this.walk(this.fromLink(target));
  }

  /** Closes every handle the walk opened (the root's stays open). */
  async close(): Promise<void> {
    await Promise.all(this.backToRoot());
  }

  /** Goes back to the root, closing the handles on the way (returned, to wait for). */
  private backToRoot(): Promise<void>[] {
    return this.steps.splice(1).map((step) => step.handle.close().catch(() => {}));
  }

  /** Walks `parts` as directory steps, but for the last name, which becomes {@link Walk.name}. */
  private async walk(parts: string[]): Promise<void> {
    const queue = [...parts];
    this.name = "";
    while (queue.length > 0) {
      const part = queue.shift()!;
      if (part === "" || part === ".") continue;
      if (part === "..") {
        if (this.steps.length === 1) throw this.escape();
        await this.steps.pop()!.handle.close();
        continue;
      }
      if (queue.length === 0) {
        this.name = part;
        return;
      }
      const opened = await this.openDirectory(part);
      if (typeof opened === "string") {
        if (++this.links > MAX_LINKS) throw this.loop();
        queue.unshift(...this.fromLink(opened));
      } else {
        this.steps.push({ handle: opened, path: `${this.steps.at(-1)!.path}/${part}` });
      }
    }
  }

  /** Opens the directory `name` in the current one, making it first when missing and asked to. */
  private async openDirectory(name: string): Promise<FileHandle | string> {
    try {
      return await this.openOrReadLink(name, DIRECTORY_FLAGS);
    } catch (error) {
      if (!this.create || errnoOf(error) !== "ENOENT") throw error;
    }
    try {
      await mkdir(this.child(name));
    } catch (error) {
      // Made meanwhile (by the sandbox, perhaps as a link): the next open sees what it is.
      if (errnoOf(error) !== "EEXIST") throw error;
    }
    return this.openOrReadLink(name, DIRECTORY_FLAGS);
  }

  /**
   * Opens `name` without following a link; when it is one (`ELOOP`, or `ENOTDIR` for a directory
   * open), returns the link's target instead. Anything else is thrown as it is.
   */
  private async openOrReadLink(name: string, flags: number, mode?: number): Promise<FileHandle | string> {
    try {
      return await open(this.child(name), flags, mode);
    } catch (error) {
      const code = errnoOf(error);
      if (code !== "ELOOP" && code !== "ENOTDIR") throw error;
      try {
        return await readlink(this.child(name));
      } catch {
        // Not a link (ENOTDIR: a file on the way), or no longer one: the first answer stands.
        throw error;
      }
    }
  }

  /** A link target's components; an absolute target restarts from the root when it names the workspace. */
  private fromLink(target: string): string[] {
    if (!target.startsWith("/")) return target.split("/");
    for (const root of [this.root.real, this.root.path]) {
      if (target === root || target.startsWith(`${root}/`)) {
        this.backToRoot();
        return target.slice(root.length).split("/");
      }
    }
    throw this.escape(target);
  }

  private escape(resolved?: string): SandboxError {
    const error = outside(this.path, this.root.path);
    return new SandboxError(
      "path_outside_workspace",
      `Path ${JSON.stringify(this.path)} leads through a symbolic link${resolved ? ` to ${resolved}` : ""}, outside the sandbox workspace ${this.root.path}. Use a path whose links stay inside the workspace.`,
      { details: { ...error.details, ...(resolved ? { resolved } : {}) } },
    );
  }

  private loop(): SandboxError {
    return new SandboxError(
      "path_outside_workspace",
      `Path ${JSON.stringify(this.path)} runs through a loop of symbolic links, so it cannot be confined to the workspace ${this.root.path}. Fix or remove the links.`,
      { details: { path: this.path, workspace: this.root.path } },
    );
  }
}
