import { realpathSync } from "node:fs";
import { dirname } from "node:path";
import { findExecutable } from "./find-executable.js";

/** What a bubblewrap sandbox needs from the host besides bubblewrap itself. */
export interface SandboxTools {
  /** This Node.js (it runs the sandbox's supervisor, and `javascript` code). */
  readonly node: string;
  /** util-linux `unshare`, which gives every command its own PID namespace. */
  readonly unshare: string;
  /** Host directories bound read-only besides the system ones: Node's install, when it lives elsewhere. */
  readonly extraReadOnly: readonly string[];
  /** `PATH` of commands that do not inherit the host's environment. */
  readonly path: string;
}

/** Where programs are visible inside the sandbox (the system directories it binds). */
export const SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

const SYSTEM_PREFIXES = ["/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/"];

/**
 * Finds the tools of {@link SandboxTools} on this host, or says what is missing. Node's real
 * path is bound when it is outside the system directories (nvm, a tarball in the home directory):
 * its install prefix, read-only, and nothing else of that home.
 */
export function findSandboxTools(): SandboxTools | string {
  const unshare = findExecutable("unshare", SANDBOX_PATH);
  if (!unshare) return "util-linux unshare was not found in /usr/bin or /bin";
  let node: string;
  try {
    node = realpathSync(process.execPath);
  } catch {
    node = process.execPath;
  }
  const visible = SYSTEM_PREFIXES.some((prefix) => node.startsWith(prefix));
  const prefix = dirname(dirname(node));
  return {
    node,
    unshare,
    extraReadOnly: visible || prefix === "/" ? [] : [prefix],
    path: visible ? SANDBOX_PATH : `${SANDBOX_PATH}:${dirname(node)}`,
  };
}
