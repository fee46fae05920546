import { randomBytes } from "node:crypto";
import { unlinkSync } from "node:fs";
import { link, readFile, unlink, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { MemoryError } from "@openrath/core";

/** Who holds a store directory. */
interface LockOwner {
  readonly pid: number;
  readonly host: string;
  readonly since: number;
  /** Random per process (shared by every copy of this package in it), to tell a reused pid apart. */
  readonly token?: string;
}

const TOKEN_KEY = Symbol.for("openrath.memory-bm25.process-token");

function processToken(): string {
  const slot = globalThis as unknown as Record<symbol, string | undefined>;
  slot[TOKEN_KEY] ??= randomBytes(8).toString("hex");
  return slot[TOKEN_KEY];
}

const held = new Set<string>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // A process that exits without closing its stores still frees their directories.
  process.once("exit", () => {
    for (const path of held) {
      try {
        unlinkSync(path);
      } catch {
        // Already gone.
      }
    }
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function readOwner(path: string): Promise<LockOwner | undefined> {
  try {
    const owner = JSON.parse(await readFile(path, "utf8")) as LockOwner;
    return typeof owner.pid === "number" && typeof owner.host === "string" ? owner : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes the lock file `path` for this process, so that two processes never write the same store
 * (each would silently overwrite the other's snapshot). A lock left by a process of this host that
 * is no longer running is taken over; one held by a live process, or by another host, is not.
 *
 * @throws {MemoryError} `memory_unavailable` naming the holder.
 */
export async function acquireLock(path: string): Promise<void> {
  const owner: LockOwner = { pid: process.pid, host: hostname(), since: Date.now(), token: processToken() };
  const staged = `${path}.${process.pid}-${randomBytes(6).toString("hex")}.tmp`;
  await writeFile(staged, JSON.stringify(owner), { mode: 0o600 });
  try {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        // link() creates the lock with its content in one step and fails if it exists.
        await link(staged, path);
        held.add(path);
        installExitHook();
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const holder = await readOwner(path);
      // Our own pid with another token is a previous process whose pid was reused (a restarted
      // container); with our token it is another copy of this package in this process.
      const stale =
        holder !== undefined &&
        holder.host === owner.host &&
        (holder.pid === process.pid ? holder.token !== owner.token : !alive(holder.pid));
      if (!stale || attempt > 0) {
        throw new MemoryError(
          "memory_unavailable",
          `The memory store at ${path.replace(/[/\\]memory\.lock$/, "")} is open in another process (${
            holder
              ? `pid ${holder.pid} on host ${holder.host}, since ${new Date(holder.since).toISOString()}`
              : "unknown holder"
          }). One directory can be written by one process at a time: close it there, share the store within one process, or delete ${path} if that process is gone.`,
          { details: { lock: path, holder } },
        );
      }
      await unlink(path).catch(() => {});
    }
  } finally {
    await unlink(staged).catch(() => {});
  }
}

/** Releases a lock taken with {@link acquireLock}. */
export async function releaseLock(path: string): Promise<void> {
  if (!held.delete(path)) return;
  await unlink(path).catch(() => {});
}
