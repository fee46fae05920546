import { createHash } from "node:crypto";
import { type FileHandle, open, readdir, readFile, unlink } from "node:fs/promises";
import { join } from "node:path";
import { syncDirectory } from "./snapshot-file.js";
import { SnapshotProblem } from "./snapshot-format.js";
import type { StoredDoc } from "./text-index.js";

/**
 * The append-only change log of a store directory. Every acknowledged change is a batch (one
 * line) appended to `memory-<generation>.log` before the change is applied in memory and before
 * `remember` or `forget` resolves; with durability `fsync` the file is fsynced first, so the batch
 * survives a crash of the process and of the machine. Compaction writes a snapshot that includes
 * every batch of the generations before it and starts the next generation.
 *
 * A line is the first 16 hex digits of the SHA-256 of its JSON, a space, and the JSON array of the
 * batch's changes. A last line that is incomplete or fails its hash is a write the crash
 * interrupted (never acknowledged) and is cut off when the store opens; a damaged line before the
 * last makes the log corrupt.
 */

/** The `format` of a log's first line. */
export const LOG_FORMAT = "openrath.memory-bm25.log";
/** The newest log layout this package reads and the one it writes. */
export const LOG_VERSION = 1;

/** One change: an entry stored (with its vector, in a store with vectors) or removed. */
export type LogChange =
  | { readonly op: "put"; readonly doc: StoredDoc; readonly vector?: readonly number[] }
  | { readonly op: "delete"; readonly scope: string; readonly id: string };

/** The log file of `generation` in `dir`. */
export function logFile(dir: string, generation: number): string {
  return join(dir, `memory-${generation}.log`);
}

const LOG_NAME = /^memory-(\d+)\.log$/;

/** The generations that have a log file in `dir`, ascending. */
export async function logGenerations(dir: string): Promise<number[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return names
    .map((name) => LOG_NAME.exec(name)?.[1])
    .filter((g): g is string => g !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}

/** Removes the log files of generations below `generation`. */
export async function removeLogsBefore(dir: string, generation: number): Promise<void> {
  for (const g of await logGenerations(dir)) {
    if (g < generation) await unlink(logFile(dir, g)).catch(() => {});
  }
}

function hashOf(json: string): string {
  return createHash("sha256").update(json).digest("hex").slice(0, 16);
}

/** A log read back. */
export interface ReadLog {
  readonly batches: LogChange[][];
  /** Bytes of complete batches (the header included); a torn tail starts here. */
  readonly validBytes: number;
  /** Whether an interrupted last write was found after `validBytes`. */
  readonly torn: boolean;
}

/**
 * Reads the log of `generation` in `dir`; `undefined` when there is none.
 *
 * @throws {SnapshotProblem} for a log that is damaged before its last line, of another format, or
 *   of a newer version (`newer_version`).
 */
export async function readLog(dir: string, generation: number): Promise<ReadLog | undefined> {
  const file = logFile(dir, generation);
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new SnapshotProblem(
      `its change log ${file} cannot be read (${(error as Error).message})`,
      "unreadable",
      {
        cause: error,
      },
    );
  }
  const batches: LogChange[][] = [];
  let offset = 0;
  let line = 0;
  let validBytes = 0;
  let torn = false;
  while (offset < bytes.length) {
    const newline = bytes.indexOf(0x0a, offset);
    const last = newline < 0 || newline === bytes.length - 1;
    if (newline < 0) {
      torn = true;
      break;
    }
    const text = bytes.subarray(offset, newline).toString("utf8");
    offset = newline + 1;
    const problem = (what: string): SnapshotProblem =>
      new SnapshotProblem(`line ${line + 1} of its change log ${file} ${what}`, "invalid_data");
    if (line === 0) {
      let header: Record<string, unknown>;
      try {
        header = JSON.parse(text) as Record<string, unknown>;
      } catch {
        if (last) {
          torn = true;
          break;
        }
        throw problem("is not a log header");
      }
      if (header?.format !== LOG_FORMAT) throw problem(`is not a header of format "${LOG_FORMAT}"`);
      if (typeof header.version !== "number" || header.version > LOG_VERSION) {
        throw new SnapshotProblem(
          `its change log ${file} has format version ${JSON.stringify(header.version)}, written by a newer @openrath/memory-bm25; this one reads version ${LOG_VERSION} — upgrade the package to open it`,
          "newer_version",
        );
      }
      if (header.generation !== generation)
        throw problem(`names generation ${JSON.stringify(header.generation)}`);
    } else {
      const space = text.indexOf(" ");
      const json = space < 0 ? "" : text.slice(space + 1);
      let changes: unknown;
      let intact = space === 16 && hashOf(json) === text.slice(0, 16);
      if (intact) {
        try {
          changes = JSON.parse(json);
        } catch {
          intact = false;
        }
      }
      if (!intact || !Array.isArray(changes)) {
        if (last) {
          torn = true;
          break;
        }
        throw problem("is damaged (its hash does not match)");
      }
      batches.push(changes as LogChange[]);
    }
    line++;
    validBytes = offset;
  }
  return { batches, validBytes, torn };
}

/** Appends batches to one generation's log. */
export class LogWriter {
  private broken: Error | undefined;

  private constructor(
    private readonly handle: FileHandle,
    readonly file: string,
    readonly generation: number,
    private bytes: number,
    /** Bytes of batches (without the header): what compaction weighs. */
    public batchBytes: number,
  ) {}

  /**
   * Opens the log of `generation` for appending, after its first `validBytes` bytes (a torn tail is
   * cut off); a new log gets its header, fsynced together with the directory.
   */
  static async open(dir: string, generation: number, validBytes?: number): Promise<LogWriter> {
    const file = logFile(dir, generation);
    const handle = await open(file, "a+", 0o600);
    try {
      const { size } = await handle.stat();
      let bytes = size;
      if (validBytes !== undefined && validBytes < size) {
        await handle.truncate(validBytes);
        bytes = validBytes;
      }
      let headerBytes = 0;
      if (bytes === 0) {
        const header = `${JSON.stringify({ format: LOG_FORMAT, version: LOG_VERSION, generation })}\n`;
        await handle.write(header);
        await handle.sync();
        await syncDirectory(dir);
        bytes = Buffer.byteLength(header);
        headerBytes = bytes;
      } else {
        const first = (await handle.read(Buffer.alloc(Math.min(bytes, 256)), 0, Math.min(bytes, 256), 0))
          .buffer;
        const newline = first.indexOf(0x0a);
        headerBytes = newline < 0 ? bytes : newline + 1;
      }
      return new LogWriter(handle, file, generation, bytes, bytes - headerBytes);
    } catch (error) {
      await handle.close().catch(() => {});
      throw error;
    }
  }

  /**
   * Appends one batch; with `sync`, fsyncs it before resolving. A failed write is cut off again,
   * so the log never holds a partial batch before a later one.
   *
   * @throws the file system's error; the log is then as it was before the call.
   */
  async append(changes: readonly LogChange[], sync: boolean): Promise<void> {
    if (this.broken) throw this.broken;
    const json = JSON.stringify(changes);
    const line = Buffer.from(`${hashOf(json)} ${json}\n`, "utf8");
    try {
      let written = 0;
      while (written < line.length) {
        const { bytesWritten } = await this.handle.write(
          line,
          written,
          line.length - written,
          this.bytes + written,
        );
        written += bytesWritten;
      }
      if (sync) await this.handle.datasync();
    } catch (error) {
      try {
        await this.handle.truncate(this.bytes);
      } catch {
        // The log may now end in a partial batch: no later batch may follow it.
        this.broken = error as Error;
      }
      throw error;
    }
    this.bytes += line.length;
    this.batchBytes += line.length;
  }

  async close(): Promise<void> {
    await this.handle.close().catch(() => {});
  }
}
