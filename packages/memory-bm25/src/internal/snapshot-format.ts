import { crc32 } from "node:zlib";

/** The `format` field every snapshot carries. */
export const SNAPSHOT_FORMAT = "openrath.memory-bm25";
/**
 * The snapshot layout this package reads and writes: version 4, a JSON header line followed by
 * binary sections (see `snapshot-layout.ts` for what they hold). Versions 1 to 3 — one JSON
 * object each — were only written by unreleased development builds and are not read.
 */
export const SNAPSHOT_VERSION = 4;

/** Where a section lies in the body: its offset from the body's start and its size, in bytes. */
export type SectionPlace = readonly [offset: number, bytes: number];

/** The fields of a snapshot's header that its writer chooses. */
export interface SnapshotFields {
  /** Unix epoch milliseconds. */
  readonly savedAt: number;
  /** The analyzer the index was built with (its version and settings). */
  readonly tokenizer: string;
  /** Size of the stored vectors, `null` without vectors. */
  readonly dimensions: number | null;
  /** The `embedModel` option the vectors were made with, `null` when not given. */
  readonly embedModel: string | null;
  /** Number of entries. */
  readonly count: number;
  /** Number of terms. */
  readonly terms: number;
  /** Number of distinct scopes of the entries. */
  readonly scopes: number;
  /** The change-log generation whose batches come after this snapshot (`memory-<log>.log`). */
  readonly log: number;
}

/** The header of a snapshot file (its first line): everything but the sections. */
export interface SnapshotHeader extends SnapshotFields {
  readonly format: typeof SNAPSHOT_FORMAT;
  readonly version: number;
  /** Size of the body (everything after the header line) in bytes. */
  readonly bodyBytes: number;
  /** CRC-32 of the body. */
  readonly crc32: number;
  /** The sections of the body by name. */
  readonly sections: Readonly<Record<string, SectionPlace>>;
}

/** A snapshot read back: its header and its sections (views of the file's bytes). */
export interface Snapshot {
  readonly header: SnapshotHeader;
  readonly sections: ReadonlyMap<string, Uint8Array>;
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
      | "truncated"
      | "checksum"
      | "invalid_data",
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A section's bytes, in one piece or several (written one after the other). */
export type SectionData = Uint8Array | readonly Uint8Array[];

const NEWLINE = 0x0a;
/** Sections start at multiples of this within the body, and the body at one within the file. */
const ALIGN = 8;
const PADDING = new Uint8Array(ALIGN);
/** How the one-object snapshots of versions 1 to 3 continued after their header fields. */
const OLD_BODY_KEY = ',"body":';

/**
 * The bytes of a snapshot, in pieces to write one after the other: the header line (padded with
 * spaces so the body starts at a multiple of 8), then each section, padded to a multiple of 8.
 * The CRC-32 in the header covers the whole body.
 */
export function encodeSnapshot(
  fields: SnapshotFields,
  sections: Iterable<readonly [string, SectionData]>,
): { readonly chunks: Uint8Array[]; readonly bytes: number } {
  const body: Uint8Array[] = [];
  const places: Record<string, SectionPlace> = {};
  let offset = 0;
  let crc = 0;
  const push = (chunk: Uint8Array) => {
    if (chunk.length === 0) return;
    body.push(chunk);
    crc = crc32(chunk, crc);
    offset += chunk.length;
  };
  for (const [name, data] of sections) {
    const start = offset;
    for (const chunk of data instanceof Uint8Array ? [data] : data) push(chunk);
    places[name] = [start, offset - start];
    if (offset % ALIGN !== 0) push(PADDING.subarray(0, ALIGN - (offset % ALIGN)));
  }
  const json = JSON.stringify({
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    ...fields,
    bodyBytes: offset,
    crc32: crc,
    sections: places,
  });
  const line = Buffer.from(json, "utf8");
  const padded = Math.ceil((line.length + 1) / ALIGN) * ALIGN;
  const head = Buffer.alloc(padded, 0x20);
  line.copy(head);
  head[padded - 1] = NEWLINE;
  return { chunks: [head, ...body], bytes: padded + offset };
}

/**
 * Parses and checks a snapshot's bytes: the header, the body's size and checksum, and that every
 * section lies inside the body. What the sections hold is checked by their reader.
 *
 * @throws {SnapshotProblem} for anything but a complete, intact snapshot of a version this package reads.
 */
export function decodeSnapshot(data: Uint8Array): Snapshot {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.length);
  const record = headerRecord(bytes);
  if (record.format !== SNAPSHOT_FORMAT) {
    throw new SnapshotProblem(
      `its "format" is ${JSON.stringify(record.format)}, not "${SNAPSHOT_FORMAT}"; it was not written by @openrath/memory-bm25`,
      "not_a_snapshot",
    );
  }
  const version = record.version;
  if (typeof version !== "number" || !Number.isInteger(version) || version < 1) {
    throw new SnapshotProblem(
      `its "version" is ${JSON.stringify(version)}, not a positive integer`,
      "invalid_data",
    );
  }
  if (version < SNAPSHOT_VERSION) {
    throw new SnapshotProblem(
      `it has format version ${version}, which only unreleased development builds of @openrath/memory-bm25 wrote; this one reads version ${SNAPSHOT_VERSION} — move the directory away and remember its entries again`,
      "old_version",
    );
  }
  if (version > SNAPSHOT_VERSION) {
    throw new SnapshotProblem(
      `it has format version ${version}, written by a newer @openrath/memory-bm25; this one reads version ${SNAPSHOT_VERSION} — upgrade the package to open it`,
      "newer_version",
    );
  }
  const count = (v: unknown) => typeof v === "number" && Number.isInteger(v) && v >= 0;
  const fields: Array<[keyof SnapshotHeader, (v: unknown) => boolean]> = [
    ["savedAt", (v) => typeof v === "number"],
    ["tokenizer", (v) => typeof v === "string"],
    ["dimensions", (v) => v === null || (count(v) && (v as number) > 0)],
    ["embedModel", (v) => v === null || typeof v === "string"],
    ["count", count],
    ["terms", count],
    ["scopes", count],
    ["log", (v) => count(v) && (v as number) >= 1],
    ["bodyBytes", count],
    ["crc32", (v) => count(v) && (v as number) <= 0xffff_ffff],
    ["sections", (v) => typeof v === "object" && v !== null && !Array.isArray(v)],
  ];
  for (const [field, valid] of fields) {
    if (!valid(record[field])) {
      throw new SnapshotProblem(
        `its header field "${field}" is ${JSON.stringify(record[field])}`,
        "invalid_data",
      );
    }
  }
  const header = record as unknown as SnapshotHeader;
  const start = bytes.indexOf(NEWLINE) + 1;
  const body = bytes.subarray(start);
  if (body.length !== header.bodyBytes) {
    throw new SnapshotProblem(
      body.length < header.bodyBytes
        ? `it is truncated: its header announces ${header.bodyBytes} bytes after it, the file holds ${body.length}`
        : `it holds ${body.length - header.bodyBytes} bytes more than its header announces`,
      body.length < header.bodyBytes ? "truncated" : "invalid_data",
    );
  }
  const crc = crc32(body);
  if (crc !== header.crc32) {
    throw new SnapshotProblem(
      `its content does not match its checksum (CRC-32 ${header.crc32}, content gives ${crc}); the file was modified or damaged`,
      "checksum",
    );
  }
  const sections = new Map<string, Uint8Array>();
  for (const [name, place] of Object.entries(header.sections)) {
    const [offset, size] = Array.isArray(place) ? (place as unknown[]) : [];
    if (!count(offset) || !count(size) || (offset as number) + (size as number) > body.length) {
      throw new SnapshotProblem(
        `its section "${name}" lies outside the file (${JSON.stringify(place)})`,
        "invalid_data",
      );
    }
    sections.set(name, body.subarray(offset as number, (offset as number) + (size as number)));
  }
  return { header, sections, bytes: bytes.length };
}

/**
 * The header of a snapshot as a JSON object: its first line. A file of versions 1 to 3 is one
 * JSON object whose header fields come before `"body"`; only those are parsed, so a large old file
 * is refused without reading it all.
 */
function headerRecord(bytes: Buffer): Record<string, unknown> {
  const newline = bytes.indexOf(NEWLINE);
  const line = bytes.subarray(0, newline < 0 ? bytes.length : newline);
  const old = line.indexOf(OLD_BODY_KEY);
  if (old >= 0) {
    const prefix = parseObject(`${line.toString("utf8", 0, old)}}`);
    if (prefix !== undefined && prefix.version !== SNAPSHOT_VERSION) return prefix;
  }
  const text = line.toString("utf8");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new SnapshotProblem(
      `its header is not valid JSON (${bytes.length === 0 ? "the file is empty" : (error as Error).message}); the file was truncated or damaged`,
      "invalid_json",
      { cause: error },
    );
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new SnapshotProblem("its header is not a JSON object", "not_a_snapshot");
  }
  if (newline < 0 && (parsed as Record<string, unknown>).version === SNAPSHOT_VERSION) {
    throw new SnapshotProblem("it is truncated: it ends inside its header", "truncated");
  }
  return parsed as Record<string, unknown>;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
