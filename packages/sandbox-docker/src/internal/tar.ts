/**
 * A small tar reader and writer for the Docker archive API: ustar headers, PAX records for names,
 * link names and sizes that do not fit, and GNU long-name entries when reading (Docker's own
 * archives use PAX; other tools may send GNU).
 */

const BLOCK = 512;
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8");

/** The type of a tar entry, reduced to what a sandbox file listing distinguishes. */
export type TarEntryType = "file" | "directory" | "symlink" | "other";

/** An entry to write. */
export interface TarWriteEntry {
  /** Path inside the archive, `/`-separated, without a leading `/`. */
  readonly name: string;
  readonly type: "file" | "directory" | "symlink";
  /** File content (files only). */
  readonly data?: Uint8Array;
  /** Permission bits (default 0o644 for files and 0o755 for directories). */
  readonly mode?: number;
  readonly uid?: number;
  readonly gid?: number;
  /** Modification time in seconds since the epoch (default: now). */
  readonly mtime?: number;
  /** Target of a symlink. */
  readonly linkName?: string;
}

/** An entry read from an archive. */
export interface TarEntry {
  readonly name: string;
  readonly type: TarEntryType;
  readonly size: number;
  readonly mode: number;
  readonly linkName: string;
  readonly data: Uint8Array;
}

/** Field offsets and widths of a ustar header. */
const FIELD = {
  name: [0, 100],
  mode: [100, 8],
  uid: [108, 8],
  gid: [116, 8],
  size: [124, 12],
  mtime: [136, 12],
  checksum: [148, 8],
  typeflag: [156, 1],
  linkname: [157, 100],
  magic: [257, 6],
  version: [263, 2],
  prefix: [345, 155],
} as const;

function writeString(header: Uint8Array, [offset, width]: readonly [number, number], value: string): void {
  header.set(encoder.encode(value).subarray(0, width), offset);
}

/** Writes `value` as zero-padded octal digits followed by a NUL, filling the field. */
function writeOctal(header: Uint8Array, [offset, width]: readonly [number, number], value: number): void {
  writeString(header, [offset, width], `${value.toString(8).padStart(width - 1, "0")}\0`);
}

/** One PAX record: `<length> <key>=<value>\n`, where the length counts the whole record. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  const bodyBytes = encoder.encode(body).length;
  const digits = String(bodyBytes).length;
  let length = bodyBytes + digits;
  // Adding the length's own digits can carry it into one more digit.
  if (String(length).length > digits) length = bodyBytes + String(length).length;
  return `${length}${body}`;
}

function header(entry: {
  name: string;
  typeflag: string;
  size: number;
  mode: number;
  uid: number;
  gid: number;
  mtime: number;
  linkName: string;
}): Uint8Array {
  const block = new Uint8Array(BLOCK);
  writeString(block, FIELD.name, entry.name);
  writeOctal(block, FIELD.mode, entry.mode & 0o7777);
  writeOctal(block, FIELD.uid, entry.uid);
  writeOctal(block, FIELD.gid, entry.gid);
  writeOctal(block, FIELD.size, entry.size);
  writeOctal(block, FIELD.mtime, Math.floor(entry.mtime));
  writeString(block, FIELD.typeflag, entry.typeflag);
  writeString(block, FIELD.linkname, entry.linkName);
  writeString(block, FIELD.magic, "ustar\0");
  writeString(block, FIELD.version, "00");
  // The checksum is computed with its own field read as eight spaces.
  block.fill(0x20, FIELD.checksum[0], FIELD.checksum[0] + FIELD.checksum[1]);
  let sum = 0;
  for (const byte of block) sum += byte;
  writeString(block, FIELD.checksum, `${sum.toString(8).padStart(6, "0")}\0 `);
  return block;
}

function padded(data: Uint8Array): Uint8Array[] {
  const rest = data.length % BLOCK;
  return rest === 0 ? [data] : [data, new Uint8Array(BLOCK - rest)];
}

const MAX_OCTAL_SIZE = 0o77777777777;
const MAX_OCTAL_ID = 0o7777777;

/**
 * Builds an uncompressed tar archive. Names, link names, sizes and ids that do not fit a ustar
 * header travel in a PAX extended header before the entry.
 */
export function writeTar(entries: readonly TarWriteEntry[]): Uint8Array {
  const parts: Uint8Array[] = [];
  const now = Math.floor(Date.now() / 1000);
  for (const entry of entries) {
    const data = entry.type === "file" ? (entry.data ?? new Uint8Array(0)) : new Uint8Array(0);
    const name = entry.type === "directory" && !entry.name.endsWith("/") ? `${entry.name}/` : entry.name;
    const linkName = entry.linkName ?? "";
    const uid = entry.uid ?? 0;
    const gid = entry.gid ?? 0;
    const pax: string[] = [];
    if (encoder.encode(name).length > FIELD.name[1]) pax.push(paxRecord("path", name));
    if (encoder.encode(linkName).length > FIELD.linkname[1]) pax.push(paxRecord("linkpath", linkName));
    if (data.length > MAX_OCTAL_SIZE) pax.push(paxRecord("size", String(data.length)));
    if (uid > MAX_OCTAL_ID) pax.push(paxRecord("uid", String(uid)));
    if (gid > MAX_OCTAL_ID) pax.push(paxRecord("gid", String(gid)));
    const mtime = entry.mtime ?? now;
    if (pax.length > 0) {
      const body = encoder.encode(pax.join(""));
      parts.push(
        header({
          name: "PaxHeader",
          typeflag: "x",
          size: body.length,
          mode: 0o644,
          uid: 0,
          gid: 0,
          mtime,
          linkName: "",
        }),
        ...padded(body),
      );
    }
    parts.push(
      header({
        // A name too long for the field is carried by the PAX record; the header keeps a cut copy.
        name: truncateUtf8(name, FIELD.name[1]),
        typeflag: entry.type === "file" ? "0" : entry.type === "directory" ? "5" : "2",
        size: data.length > MAX_OCTAL_SIZE ? 0 : data.length,
        mode: entry.mode ?? (entry.type === "directory" ? 0o755 : 0o644),
        uid: Math.min(uid, MAX_OCTAL_ID),
        gid: Math.min(gid, MAX_OCTAL_ID),
        mtime,
        linkName: truncateUtf8(linkName, FIELD.linkname[1]),
      }),
    );
    if (data.length > 0) parts.push(...padded(data));
  }
  parts.push(new Uint8Array(BLOCK * 2));
  let total = 0;
  for (const part of parts) total += part.length;
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function truncateUtf8(value: string, maxBytes: number): string {
  const bytes = encoder.encode(value);
  if (bytes.length <= maxBytes) return value;
  // Cut on a character boundary so the header holds valid UTF-8.
  let end = maxBytes;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return decoder.decode(bytes.subarray(0, end));
}

function readString(block: Uint8Array, [offset, width]: readonly [number, number]): string {
  const field = block.subarray(offset, offset + width);
  const nul = field.indexOf(0);
  return decoder.decode(nul === -1 ? field : field.subarray(0, nul));
}

/** Reads a numeric field: octal text, or GNU base-256 when the high bit of the first byte is set. */
function readNumber(block: Uint8Array, [offset, width]: readonly [number, number]): number {
  const field = block.subarray(offset, offset + width);
  if ((field[0]! & 0x80) !== 0) {
    let value = field[0]! & 0x7f;
    for (let i = 1; i < field.length; i++) value = value * 256 + field[i]!;
    return value;
  }
  const text = readString(block, [offset, width]).trim();
  if (text === "") return 0;
  if (!/^[0-7]+$/.test(text))
    throw new Error(`tar header field at offset ${offset} is not octal: ${JSON.stringify(text)}`);
  return Number.parseInt(text, 8);
}

function parsePax(data: Uint8Array): Map<string, string> {
  const records = new Map<string, string>();
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    if (space === -1) break;
    const length = Number.parseInt(decoder.decode(data.subarray(at, space)), 10);
    if (!Number.isFinite(length) || length <= 0) throw new Error("tar PAX record has a bad length");
    const record = decoder.decode(data.subarray(space + 1, at + length - 1));
    const equals = record.indexOf("=");
    if (equals !== -1) records.set(record.slice(0, equals), record.slice(equals + 1));
    at += length;
  }
  return records;
}

function entryType(typeflag: string): TarEntryType {
  switch (typeflag) {
    case "0":
    case "":
    case "7":
      return "file";
    case "5":
      return "directory";
    case "2":
      return "symlink";
    default:
      return "other";
  }
}

/**
 * Parses an uncompressed tar archive into its entries (PAX and GNU long-name metadata applied,
 * metadata entries themselves left out).
 *
 * @throws {Error} on a corrupt archive (bad checksum, truncated data).
 */
export function readTar(archive: Uint8Array): TarEntry[] {
  const entries: TarEntry[] = [];
  let at = 0;
  let pax = new Map<string, string>();
  let longName: string | undefined;
  let longLink: string | undefined;
  while (at + BLOCK <= archive.length) {
    const block = archive.subarray(at, at + BLOCK);
    if (block.every((byte) => byte === 0)) break;
    const stored = readNumber(block, FIELD.checksum);
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) {
      sum += i >= FIELD.checksum[0] && i < FIELD.checksum[0] + FIELD.checksum[1] ? 0x20 : block[i]!;
    }
    if (sum !== stored) throw new Error(`tar header at byte ${at} has a bad checksum`);
    const typeflag = readString(block, FIELD.typeflag);
    const size = Number(pax.get("size") ?? readNumber(block, FIELD.size));
    const dataStart = at + BLOCK;
    const dataEnd = dataStart + size;
    if (dataEnd > archive.length) throw new Error(`tar entry at byte ${at} is truncated`);
    const data = archive.subarray(dataStart, dataEnd);
    at = dataStart + Math.ceil(size / BLOCK) * BLOCK;
    if (typeflag === "x") {
      pax = parsePax(data);
      continue;
    }
    // Global PAX headers carry archive-wide defaults (comments, mtimes) this reader does not use.
    if (typeflag === "g") continue;
    if (typeflag === "L" || typeflag === "K") {
      const nul = data.indexOf(0);
      const value = decoder.decode(nul === -1 ? data : data.subarray(0, nul));
      if (typeflag === "L") longName = value;
      else longLink = value;
      continue;
    }
    const magic = readString(block, FIELD.magic);
    const prefix = magic.startsWith("ustar") ? readString(block, FIELD.prefix) : "";
    const headerName = prefix ? `${prefix}/${readString(block, FIELD.name)}` : readString(block, FIELD.name);
    entries.push({
      name: pax.get("path") ?? longName ?? headerName,
      type: entryType(typeflag),
      size,
      mode: readNumber(block, FIELD.mode),
      linkName: pax.get("linkpath") ?? longLink ?? readString(block, FIELD.linkname),
      data,
    });
    pax = new Map();
    longName = undefined;
    longLink = undefined;
  }
  return entries;
}
