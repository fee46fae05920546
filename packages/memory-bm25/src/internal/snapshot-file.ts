import { randomBytes } from "node:crypto";
import { copyFile, link, open, readdir, rename, stat, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { decodeSnapshot, type Snapshot, SnapshotProblem } from "./snapshot-format.js";

/**
 * Reads and decodes the snapshot at `file`; `undefined` when there is no such file.
 *
 * @throws {SnapshotProblem} when the file exists but cannot be used.
 */
export async function readSnapshot(file: string): Promise<Snapshot | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readWhole(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new SnapshotProblem(`it cannot be read (${(error as Error).message})`, "unreadable", {
      cause: error,
    });
  }
  return decodeSnapshot(bytes);
}

/** Whether `path` exists (anything that `stat` reaches). */
export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/** The bytes of `file`, read in one call where the system allows (a snapshot is read whole). */
async function readWhole(file: string): Promise<Buffer> {
  const handle = await open(file, "r");
  try {
    const { size } = await handle.stat();
    const bytes = Buffer.allocUnsafe(size);
    let read = 0;
    while (read < size) {
      const { bytesRead } = await handle.read(bytes, read, size - read, read);
      if (bytesRead === 0) break;
      read += bytesRead;
    }
    return read === size ? bytes : bytes.subarray(0, read);
  } finally {
    await handle.close();
  }
}

/**
 * Replaces `file` with `chunks` (written in order) so that a crash at any point leaves either the
 * old or the new content: the bytes go to a temporary file in the same directory, are fsynced, and are renamed
 * over `file`. Before that, when `keepBackup` is set and `file` exists, `<file>.bak` is atomically
 * replaced by the current `file` (a hard link, or a copy where links are not supported), so the
 * previous snapshot always survives. The directory is fsynced last.
 */
export async function writeFileAtomic(
  file: string,
  chunks: readonly Uint8Array[],
  keepBackup: boolean,
): Promise<void> {
  const dir = dirname(file);
  const temp = `${file}.${process.pid}-${randomBytes(6).toString("hex")}.tmp`;
  try {
    const handle = await open(temp, "wx", 0o600);
    try {
      let position = 0;
      for (const chunk of chunks) {
        let done = 0;
        while (done < chunk.length) {
          const { bytesWritten } = await handle.write(chunk, done, chunk.length - done, position);
          done += bytesWritten;
          position += bytesWritten;
        }
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (keepBackup) await backUp(file);
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
  await syncDirectory(dir);
}

async function backUp(file: string): Promise<void> {
  const staged = `${file}.bak.${process.pid}-${randomBytes(6).toString("hex")}.tmp`;
  try {
    await link(file, staged);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return;
    // File systems without hard links (some network and FUSE mounts) get a copy.
    await copyFile(file, staged);
  }
  try {
    await rename(staged, `${file}.bak`);
  } catch (error) {
    await unlink(staged).catch(() => {});
    throw error;
  }
}

/** Fsyncs directory `dir` (so a created or renamed file in it is durable), where the platform can. */
export async function syncDirectory(dir: string): Promise<void> {
  try {
    const handle = await open(dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Some platforms and file systems refuse fsync on a directory; the rename has happened.
  }
}

/**
 * Removes temporary files a crashed writer left next to `file` (`<file>.*.tmp`, `<file>.bak.*.tmp`).
 * Only called while this process holds the directory's lock, so no live writer owns them.
 */
export async function removeLeftoverTempFiles(file: string): Promise<string[]> {
  const dir = dirname(file);
  const prefix = `${basename(file)}.`;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const leftovers = names.filter((n) => n.startsWith(prefix) && n.endsWith(".tmp"));
  await Promise.all(leftovers.map((n) => unlink(join(dir, n)).catch(() => {})));
  return leftovers;
}
