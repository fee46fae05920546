import { lstat, readlink, realpath } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { SandboxError } from "@openrath/core";
import { confinePath, outside } from "@openrath/core/backend";

/** A workspace root: the path the sandbox reports and the same directory with symlinks resolved. */
export interface WorkspaceRoot {
  readonly path: string;
  readonly real: string;
}

/** A path inside the workspace. */
export interface WorkspacePath {
  /** Relative to the workspace root, `/`-separated, `.` for the root (as {@link confinePath} returns it). */
  readonly rel: string;
  /** The host path it reaches once every symlink on the way is followed (it may not exist yet). */
  readonly real: string;
}

/** Symlinks followed before giving up, as the kernel does (ELOOP). */
const MAX_LINKS = 40;

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ENOTDIR";
}

/**
 * The real path `path` reaches: `realpath` for what exists; for what does not, the real path of its
 * nearest existing ancestor plus the rest, following a dangling symlink on the way (writing through
 * it would create its target).
 */
async function reach(path: string, links: { count: number }): Promise<string> {
  try {
    return await realpath(path);
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  const parent = dirname(path);
  if (parent === path) return path;
  const candidate = join(await reach(parent, links), basename(path));
  let isLink = false;
  try {
    isLink = (await lstat(candidate)).isSymbolicLink();
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  if (!isLink) return candidate;
  if (++links.count > MAX_LINKS) {
    throw Object.assign(new Error(`too many levels of symbolic links at ${candidate}`), { code: "ELOOP" });
  }
  return reach(resolve(dirname(candidate), await readlink(candidate)), links);
}

function inside(real: string, root: string): boolean {
  return real === root || real.startsWith(root === "/" ? "/" : `${root}/`);
}

/**
 * Confines `path` to the workspace (through `..` and absolute paths, by {@link confinePath}; an
 * absolute path may name the root by its reported or its real path) and then through symlinks: the
 * real path it reaches, existing or not, must stay inside the workspace's real path.
 *
 * @throws {SandboxError} `path_outside_workspace`; `invalid_argument` for a non-string path.
 */
export async function resolveInWorkspace(path: string, root: WorkspaceRoot): Promise<WorkspacePath> {
  let rel: string;
  try {
    rel = confinePath(path, root.path);
  } catch (error) {
    if (root.real === root.path || !SandboxError.isInstance(error, "path_outside_workspace")) throw error;
    rel = confinePath(path, root.real);
  }
  const lexical = rel === "." ? root.real : join(root.real, rel);
  let real: string;
  try {
    real = await reach(lexical, { count: 0 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOOP") {
      throw new SandboxError(
        "path_outside_workspace",
        `Path ${JSON.stringify(path)} runs through a loop of symbolic links, so it cannot be confined to the workspace ${root.path}. Fix or remove the links.`,
        { cause: error, details: { path, workspace: root.path } },
      );
    }
    throw error;
  }
  if (!inside(real, root.real)) {
    const error = outside(path, root.path);
    throw new SandboxError(
      "path_outside_workspace",
      `Path ${JSON.stringify(path)} leads through a symbolic link to ${real}, outside the sandbox workspace ${root.path}. Use a path whose links stay inside the workspace.`,
      { details: { ...error.details, resolved: real } },
    );
  }
  return { rel, real };
}
