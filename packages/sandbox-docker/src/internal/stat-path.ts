import type Dockerode from "dockerode";
import { statusOf } from "./docker-client.js";

/** What the archive API's `HEAD` tells of one path (Docker's `X-Docker-Container-Path-Stat`). */
interface PathStat {
  readonly mode: number;
  readonly size: number;
  /** For a symlink: its target, fully resolved inside the container (absolute). */
  readonly linkTarget: string;
}

/** Whether bit `n` of Go's `os.FileMode` is set (the type bits sit above 2^31: no 32-bit operators). */
function bit(mode: number, n: number): boolean {
  return Math.floor(mode / 2 ** n) % 2 === 1;
}

const isSymlink = (mode: number) => bit(mode, 27);

/** Symlinks followed before giving up, as the kernel does (ELOOP). */
const MAX_LINKS = 40;

/** A path resolved inside the container, as the file operations need it. */
export interface ResolvedPath {
  /** `d` directory, `f` file, `o` other, `n` missing, `N` missing under a non-directory, `loop`. */
  readonly type: "d" | "f" | "o" | "n" | "N" | "loop";
  /** Absolute path with every symlink resolved (the missing tail appended as it is). */
  readonly path: string;
  readonly executable: boolean;
  /** For `n`: the deepest existing directory on the way, and the components missing below it. */
  readonly existing?: string;
  readonly missing?: readonly string[];
}

async function statOf(container: Dockerode.Container, path: string): Promise<PathStat | undefined> {
  let response: { headers?: Record<string, string>; resume?: () => void };
  try {
    response = (await container.infoArchive({ path })) as typeof response;
  } catch (error) {
    // HEAD answers carry no body: a 404 is a missing path (a missing container fails the next call).
    if (statusOf(error) === 404) return undefined;
    throw error;
  }
  response.resume?.();
  const header = response.headers?.["x-docker-container-path-stat"];
  if (!header) throw new Error(`Docker answered HEAD ${path} without a path stat`);
  const stat = JSON.parse(Buffer.from(header, "base64").toString("utf8")) as Partial<PathStat>;
  return {
    mode: Number(stat.mode ?? 0),
    size: Number(stat.size ?? 0),
    linkTarget: String(stat.linkTarget ?? ""),
  };
}

/** Directory (ModeDir), other (device, pipe, socket, char device, irregular) or a regular file. */
function typeOf(mode: number): "d" | "f" | "o" {
  if (bit(mode, 31)) return "d";
  return [26, 25, 24, 21, 19].some((n) => bit(mode, n)) ? "o" : "f";
}

/**
 * Resolves `relative` (already confined lexically) under the container's real workspace `root`
 * through the archive API's `HEAD` — one request per component, no exec — following every symlink
 * the way the kernel would (Docker hands back each link's target already resolved inside the
 * container). `inside` says whether a resolved path stays in the workspace; the walk stops (and
 * returns that path) at the first one that does not, so the caller can refuse it.
 */
export async function statPath(
  container: Dockerode.Container,
  root: string,
  relative: string,
  inside: (path: string) => boolean,
): Promise<ResolvedPath> {
  const parts = relative === "." ? [] : relative.split("/");
  let current = root;
  let links = 0;
  for (let i = 0; i < parts.length; i++) {
    const next = `${current === "/" ? "" : current}/${parts[i]}`;
    const stat = await statOf(container, next);
    if (!stat) {
      return {
        type: "n",
        path: [next, ...parts.slice(i + 1)].join("/"),
        executable: false,
        existing: current,
        missing: parts.slice(i),
      };
    }
    if (isSymlink(stat.mode)) {
      if (++links > MAX_LINKS || stat.linkTarget === "")
        return { type: "loop", path: next, executable: false };
      current = stat.linkTarget.replace(/\/+$/, "") || "/";
      if (!inside(current)) return { type: "o", path: current, executable: false };
      // The target itself may be missing (a dangling link): look at it as the next component does.
      const target = await statOf(container, current);
      if (!target) {
        const slash = current.lastIndexOf("/");
        return {
          type: "n",
          path: [current, ...parts.slice(i + 1)].join("/"),
          executable: false,
          existing: current.slice(0, slash) || "/",
          missing: [current.slice(slash + 1), ...parts.slice(i + 1)],
        };
      }
      if (typeOf(target.mode) !== "d" && i < parts.length - 1) {
        return { type: "N", path: [current, ...parts.slice(i + 1)].join("/"), executable: false };
      }
      if (i === parts.length - 1) {
        const type = typeOf(target.mode);
        return { type, path: current, executable: type === "f" && (target.mode & 0o111) !== 0 };
      }
      continue;
    }
    current = next;
    const type = typeOf(stat.mode);
    if (type !== "d" && i < parts.length - 1) {
      return { type: "N", path: [current, ...parts.slice(i + 1)].join("/"), executable: false };
    }
    if (i === parts.length - 1)
      return { type, path: current, executable: type === "f" && (stat.mode & 0o111) !== 0 };
  }
  return { type: "d", path: current, executable: false };
}
