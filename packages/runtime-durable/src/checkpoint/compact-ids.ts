import type { Chunk } from "@openrath/core";

/** A UUIDv7 in canonical lower-case text: its 48-bit millisecond time, then version, variant and random bits. */
const UUID_V7 = /^([0-9a-f]{8})-([0-9a-f]{4})-(7[0-9a-f]{3})-([89ab][0-9a-f]{3})-([0-9a-f]{12})$/;

const MARK = "~";
const MAX_MS = 0xffff_ffff_ffff;

/**
 * A chunk's id as a compact body stores it. Core's chunk ids are UUIDv7s whose time is the chunk's
 * `createdAt`: such an id is stored as `~` and the base64url of its last 10 bytes (15 characters
 * instead of 36, and the 62 random bits at 6 bits a character instead of 4), its time taken back
 * from `createdAt`. Any other id is stored as it is, with a `~` in front when it starts with one.
 */
export function compactId(id: string, createdAt: unknown): string {
  const m = UUID_V7.exec(id);
  if (
    m !== null &&
    typeof createdAt === "number" &&
    Number.isSafeInteger(createdAt) &&
    Number.parseInt(m[1]! + m[2]!, 16) === createdAt
  )
    return MARK + Buffer.from(m[3]! + m[4]! + m[5]!, "hex").toString("base64url");
  return id.startsWith(MARK) ? MARK + id : id;
}

/**
 * The id {@link compactId} stored, back.
 *
 * @throws a plain `Error` when a compact id is malformed or its chunk has no usable `createdAt`.
 */
export function expandId(stored: string, createdAt: unknown): string {
  if (!stored.startsWith(MARK)) return stored;
  if (stored.startsWith(MARK, 1)) return stored.slice(1);
  const rest = Buffer.from(stored.slice(1), "base64url");
  if (rest.length !== 10 || rest.toString("base64url") !== stored.slice(1))
    throw new Error(`compact chunk id ${JSON.stringify(stored)} is malformed`);
  if (
    typeof createdAt !== "number" ||
    !Number.isSafeInteger(createdAt) ||
    createdAt < 0 ||
    createdAt > MAX_MS
  )
    throw new Error(`compact chunk id ${JSON.stringify(stored)} has no createdAt to take its time from`);
  const time = createdAt.toString(16).padStart(12, "0");
  const tail = rest.toString("hex");
  return `${time.slice(0, 8)}-${time.slice(8)}-${tail.slice(0, 4)}-${tail.slice(4, 8)}-${tail.slice(8)}`;
}

/** `chunk` with its id compacted (same keys, same order). */
export function compactChunk(chunk: Chunk): Chunk {
  return { ...chunk, id: compactId(chunk.id, chunk.createdAt) };
}

/**
 * Expands the ids of chunks parsed from a compact body, in place (an assignment keeps the key's
 * place, so the chunk serializes as it was written).
 */
export function expandChunkIds(chunks: readonly unknown[]): void {
  for (const chunk of chunks) {
    const c = chunk as { id?: unknown; createdAt?: unknown };
    if (typeof c?.id !== "string") throw new Error("a chunk of it has no id");
    c.id = expandId(c.id, c.createdAt);
  }
}
