import { createHash, randomBytes } from "node:crypto";
import { copyFile, link, open, readdir, readFile, rename, stat, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** The `format` field every snapshot carries. */
export const SNAPSHOT_FORMAT = "openrath.memory-bm25";
/**
 * The snapshot layout this package reads and writes: version 3, the compact form of
 * `CompactIndex` with the change-log generation that follows it. Versions 1 and 2 were only
 * written by unreleased development builds and are not read.
 */
export const SNAPSHOT_VERSION = 3;

/** The header of a snapshot file: everything but the index. */
export interface SnapshotHeader {
  readonly format: typeof SNAPSHOT_FORMAT;
  readonly version: number;
  /** Unix epoch milliseconds. */
  readonly savedAt: number;
  /** The tokenizer the index was built with ({@link TOKENIZER_VERSION} plus stop words). */
  readonly tokenizer: string;
  /** Size of the stored vectors, `null` without vectors. */
  readonly dimensions: number | null;
  /** The `embedModel` option the vectors were made with, `null` when not given. */
  readonly embedModel: string | null;
  /** Number of entries. */
  readonly count: number;
  /** The change-log generation whose batches come after this snapshot (`memory-<log>.log`). */
  readonly log: number;
  /** Hex SHA-256 of the JSON text of `body`, as written. */
  readonly sha256: string;
}

/** A snapshot read back: its header and its body (the saved index, in the layout of its version). */
export interface Snapshot {
  readonly header: SnapshotHeader;
  readonly body: unknown;
  /** Size of the file in bytes. */
  readonly bytes: number;
}

/** Why a snapshot file cannot be used. */
export class SnapshotProblem extends Error {
  constructor(
    message: string,
    readonly reason:
      | "unreadable"
      | "invalid_json"
      | "not_a_snapshot"
      | "newer_version"
      | "old_version"
      | "checksum"
      | "invalid_data",
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const BODY_KEY = ',"body":';
const CLOSING_BRACE = 0x7d;

/** The file text of a snapshot: the header fields, then `"body"`, which the checksum covers. */
export function encodeSnapshot(
  header: Omit<SnapshotHeader, "sha256" | "format" | "version">,
  body: unknown,
): string {
  const bodyText = JSON.stringify(body);
  const head = JSON.stringify({
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    ...header,
    sha256: createHash("sha256").update(bodyText).digest("hex"),
  });
  return `${head.slice(0, -1)}${BODY_KEY}${bodyText}}\n`;
}

/**
 * Parses and checks a snapshot's text (or its UTF-8 bytes, which spares encoding it again for the
 * checksum).
 *
 * @throws {SnapshotProblem} for anything but a complete, intact snapshot of a version this package reads.
 */
export function decodeSnapshot(data: string | Uint8Array): Snapshot {
  const bytes =
    typeof data === "string"
      ? Buffer.from(data, "utf8")
      : Buffer.from(data.buffer, data.byteOffset, data.length);
  const text = typeof data === "string" ? data : bytes.toString("utf8");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new SnapshotProblem(
      `it is not valid JSON (${text.length === 0 ? "the file is empty" : (error as Error).message}); the file was truncated or damaged`,
      "invalid_json",
      { cause: error },
    );
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new SnapshotProblem("it is not a JSON object", "not_a_snapshot");
  }
  const record = parsed as Record<string, unknown>;
  if (record.format !== SNAPSHOT_FORMAT) {
    throw new SnapshotProblem(
      `its "format" is ${JSON.stringify(record.format)}, not "${SNAPSHOT_FORMAT}"; it was not written by @openrath/memory-bm25`,
      "not_a_snapshot",
    );
  }
  if (typeof record.version !== "number" || !Number.isInteger(record.version) || record.version < 1) {
    throw new SnapshotProblem(
      `its "version" is ${JSON.stringify(record.version)}, not a positive integer`,
      "invalid_data",
    );
  }
  if (record.version < SNAPSHOT_VERSION) {
    throw new SnapshotProblem(
      `it has format version ${record.version}, which only unreleased development builds of @openrath/memory-bm25 wrote; this one reads version ${SNAPSHOT_VERSION} — move the directory away and remember its entries again`,
      "old_version",
    );
  }
  if (record.version > SNAPSHOT_VERSION) {
    throw new SnapshotProblem(
      `it has format version ${record.version}, written by a newer @openrath/memory-bm25; this one reads version ${SNAPSHOT_VERSION} — upgrade the package to open it`,
      "newer_version",
    );
  }
  // The checksum covers the bytes of the body's JSON text, between `"body":` and the last brace.
  const start = bytes.indexOf(BODY_KEY);
  const end = bytes.lastIndexOf(CLOSING_BRACE);
  if (start < 0 || !("body" in record)) throw new SnapshotProblem('it has no "body"', "invalid_data");
  const sha = createHash("sha256")
    .update(bytes.subarray(start + BODY_KEY.length, end))
    .digest("hex");
  if (sha !== record.sha256) {
    throw new SnapshotProblem(
      `its content does not match its checksum (sha256 ${String(record.sha256)}, content hashes to ${sha}); the file was modified or damaged`,
      "checksum",
    );
  }
  const fields: Array<[keyof SnapshotHeader, (v: unknown) => boolean]> = [
    ["savedAt", (v) => typeof v === "number"],
    ["tokenizer", (v) => typeof v === "string"],
    ["dimensions", (v) => v === null || (typeof v === "number" && Number.isInteger(v) && v > 0)],
    ["embedModel", (v) => v === null || typeof v === "string"],
    ["count", (v) => typeof v === "number" && Number.isInteger(v) && v >= 0],
    ["log", (v) => typeof v === "number" && Number.isInteger(v) && v >= 1],
  ];
  for (const [field, valid] of fields) {
    if (!valid(record[field])) {
      throw new SnapshotProblem(
        `its header field "${field}" is ${JSON.stringify(record[field])}`,
        "invalid_data",
      );
    }
  }
  const { body, ...header } = record;
  return { header: header as unknown as SnapshotHeader, body, bytes: bytes.length };
}

/**
 * Reads and decodes the snapshot at `file`; `undefined` when there is no such file.
 *
 * @throws {SnapshotProblem} when the file exists but cannot be used.
 */
export async function readSnapshot(file: string): Promise<Snapshot | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
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

/**
 * Replaces `file` with `text` so that a crash at any point leaves either the old or the new
 * content: the text goes to a temporary file in the same directory, is fsynced, and is renamed
 * over `file`. Before that, when `keepBackup` is set and `file` exists, `<file>.bak` is atomically
 * replaced by the current `file` (a hard link, or a copy where links are not supported), so the
 * previous snapshot always survives. The directory is fsynced last.
 */
export async function writeFileAtomic(file: string, text: string, keepBackup: boolean): Promise<void> {
  const dir = dirname(file);
  const temp = `${file}.${process.pid}-${randomBytes(6).toString("hex")}.tmp`;
  try {
    const handle = await open(temp, "wx", 0o600);
    try {
      await handle.writeFile(text, "utf8");
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
