const digits = "0123456789abcdef";
// Character codes of each byte's two hex digits, looked up rather than computed per id.
const HIGH = Array.from({ length: 256 }, (_, b) => digits.charCodeAt(b >>> 4));
const LOW = Array.from({ length: 256 }, (_, b) => digits.charCodeAt(b & 0xf));
const chars = new Array<number>(36).fill(48);
const pool = new Uint8Array(16 * 256);
let poolOffset = pool.length;
let lastMs = -1;
let sequence = 0;

function nextRandom(): number {
  if (poolOffset >= pool.length) {
    globalThis.crypto.getRandomValues(pool);
    poolOffset = 0;
  }
  return pool[poolOffset++]!;
}

function put(at: number, byte: number): number {
  chars[at] = HIGH[byte]!;
  chars[at + 1] = LOW[byte]!;
  return at + 2;
}

/**
 * A UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, a 12-bit counter that keeps ids made
 * in the same millisecond in creation order, then 62 random bits. Sorting ids sorts by creation.
 * Built as one flat string, since concatenation would leave a rope that costs several times more
 * memory per id.
 */
export function newId(now: number = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    sequence = 0;
  } else if (++sequence > 0xfff) {
    // More than 4096 ids in one millisecond: borrow the next millisecond so order still holds.
    lastMs++;
    sequence = 0;
  }
  const hi = Math.floor(lastMs / 0x1000000);
  const lo = lastMs % 0x1000000;
  let at = put(0, (hi >>> 16) & 0xff);
  at = put(at, (hi >>> 8) & 0xff);
  at = put(at, hi & 0xff);
  at = put(at, (lo >>> 16) & 0xff);
  chars[at++] = 45;
  at = put(at, (lo >>> 8) & 0xff);
  at = put(at, lo & 0xff);
  chars[at++] = 45;
  at = put(at, 0x70 | (sequence >>> 8));
  at = put(at, sequence & 0xff);
  chars[at++] = 45;
  at = put(at, 0x80 | (nextRandom() & 0x3f));
  at = put(at, nextRandom());
  chars[at++] = 45;
  for (let i = 0; i < 6; i++) at = put(at, nextRandom());
  return String.fromCharCode.apply(null, chars);
}

const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The session id format in words, for error messages. */
export const SESSION_ID_FORMAT =
  'a session id is a UUID in lower-case canonical form (8-4-4-4-12 hex digits, such as "0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7b"); core makes UUID v7';

/**
 * Whether `value` has the session id format: a UUID in lower-case canonical form, as {@link newId}
 * makes (any version is accepted, so ids made elsewhere as UUID v4 still read). Nothing else can
 * appear in a file name built from a session id: no separator, dot, NUL or upper-case letter.
 */
export function isSessionId(value: unknown): value is string {
  return typeof value === "string" && value.length === 36 && SESSION_ID.test(value);
}

/** A bounded, quoted preview of an untrusted string for an error message (NUL and control characters escaped). */
export function previewString(value: string, max = 80): string {
  return value.length <= max
    ? JSON.stringify(value)
    : `${JSON.stringify(value.slice(0, max))}… (${value.length} characters)`;
}
