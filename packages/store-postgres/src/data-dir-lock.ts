import { linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { resolve } from "node:path";
import { DurableError } from "@openrath/runtime-durable/store";

/** Who holds a data directory's lock, as its lock file says. */
interface LockOwner {
  readonly pid: number;
  readonly host: string;
}

/** The lock files this process holds. */
const held = new Set<string>();

function ownerOf(path: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(path, "utf8")) as Partial<LockOwner>;
    return typeof owner.pid === "number" && typeof owner.host === "string"
      ? { pid: owner.pid, host: owner.host }
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the owner may still be running. Another host's process cannot be checked, so it counts
 * as alive. This process's own pid in a lock it does not hold is an earlier process that had the
 * same pid (a restarted container).
 */
function alive(owner: LockOwner): boolean {
  if (owner.host !== hostname()) return true;
  if (owner.pid === process.pid) return false;
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function locked(dataDir: string, path: string, by: string): DurableError {
  return new DurableError(
    "store_locked",
    `The embedded database in ${dataDir} is open in ${by}; PGlite serves one process at a time (two would corrupt it). Stop that process, or use a PostgreSQL server for several processes. If that process is gone, remove ${path}.`,
    { details: { dataDir, lockFile: path } },
  );
}

/**
 * Takes the lock of an embedded database directory: the file `<dataDir>.lock` beside it, created
 * exclusively, naming this process. A lock whose process is gone (killed with -9) is taken over.
 * Returns the release, which removes the file.
 *
 * @throws {DurableError} `store_locked` when another live process (or this one) holds it.
 */
export function lockDataDir(dataDir: string): () => void {
  const path = `${resolve(dataDir)}.lock`;
  if (held.has(path)) throw locked(dataDir, path, "this process already");
  const me = JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString() });
  for (let attempt = 0; attempt < 3; attempt++) {
    // Written aside and linked into place: the lock file never exists without its owner in it.
    const mine = `${path}.${process.pid}.tmp`;
    writeFileSync(mine, me);
    try {
      linkSync(mine, path);
      held.add(path);
      return () => {
        if (!held.delete(path)) return;
        if (ownerOf(path)?.pid === process.pid) unlinkSync(path);
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    } finally {
      unlinkSync(mine);
    }
    const owner = ownerOf(path);
    if (owner && alive(owner)) throw locked(dataDir, path, `process ${owner.pid} on ${owner.host}`);
    // A stale lock: moved aside, so that of two processes taking it over at once only one removes
    // it; the other finds the winner's lock in the next round.
    try {
      renameSync(path, `${path}.stale-${process.pid}`);
      unlinkSync(`${path}.stale-${process.pid}`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  throw locked(dataDir, path, "another process");
}
