/** The four 32-bit lanes of a {@link hashString} before they are turned into hex. */
export type HashLanes = [number, number, number, number];

/**
 * The lanes of the hash of `text`: two UTF-16 code units per step (one 32-bit word), four
 * multiply-xor lanes. The length seeds the lanes, so a string and its extension by a zero code
 * unit differ.
 */
export function hashLanes(text: string): HashLanes {
  const n = text.length;
  const lanes: HashLanes = [
    0xdeadbeef ^ 0x9e3779b1 ^ n,
    0x41c6ce57 ^ 0x9e3779b1,
    0xdeadbeef ^ 0x85ebca6b ^ n,
    0x41c6ce57 ^ 0x85ebca6b,
  ];
  mixCodeUnits(lanes, text);
  return lanes;
}

/**
 * Continues `lanes` over `text`, in place: its length, then its code units two at a time. Strings
 * absorbed one after another are told apart by their lengths, so a record of fields hashes
 * without being serialized first.
 */
export function absorb(lanes: HashLanes, text: string): void {
  const n = text.length;
  lanes[0] = Math.imul(lanes[0] ^ n, 2654435761);
  lanes[1] = Math.imul(lanes[1] ^ n, 1597334677);
  lanes[2] = Math.imul(lanes[2] ^ n, 2654435761);
  lanes[3] = Math.imul(lanes[3] ^ n, 1597334677);
  mixCodeUnits(lanes, text);
}

/**
 * Folds the code units of `text` into `lanes`, in place: two per step (one 32-bit word, the last
 * one padded with a zero unit), through four multiply-xor lanes.
 */
function mixCodeUnits(lanes: HashLanes, text: string): void {
  const n = text.length;
  let a1 = lanes[0];
  let a2 = lanes[1];
  let b1 = lanes[2];
  let b2 = lanes[3];
  for (let i = 0; i < n; i += 2) {
    const ch = text.charCodeAt(i) | ((i + 1 < n ? text.charCodeAt(i + 1) : 0) << 16);
    a1 = Math.imul(a1 ^ ch, 2654435761);
    a2 = Math.imul(a2 ^ ch, 1597334677);
    b1 = Math.imul(b1 ^ ch, 2654435761);
    b2 = Math.imul(b2 ^ ch, 1597334677);
  }
  lanes[0] = a1;
  lanes[1] = a2;
  lanes[2] = b1;
  lanes[3] = b2;
}

/** Lanes to start a record's hash with ({@link absorb}). */
export function recordStart(): HashLanes {
  return [0x1b873593, 0xcc9e2d51, 0x27d4eb2f, 0x165667b1];
}

/** Lanes to start a chain with ({@link mixLanes}). */
export function chainStart(): HashLanes {
  return [0x2545f491, 0x7f4a7c15, 0x61c88647, 0x3c6ef372];
}

/** Folds the lanes `next` into the chain `into`, in place: O(1) per link, order-sensitive. */
export function mixLanes(into: HashLanes, next: HashLanes): void {
  into[0] = Math.imul(into[0] ^ next[0], 2654435761) ^ (into[1] >>> 15);
  into[1] = Math.imul(into[1] ^ next[1], 1597334677) ^ (into[2] >>> 13);
  into[2] = Math.imul(into[2] ^ next[2], 2654435761) ^ (into[3] >>> 15);
  into[3] = Math.imul(into[3] ^ next[3], 1597334677) ^ (into[0] >>> 13);
}

/**
 * A 106-bit non-cryptographic hash of a string (two 53-bit cyrb53-style lanes pairs computed in
 * one pass), as 28 hex digits. Stable across runs and platforms; used to recognise a model
 * request again on replay.
 */
export function hashString(text: string): string {
  return lanesToHex(hashLanes(text));
}

const HEX = Array.from("0123456789abcdef", (c) => c.charCodeAt(0));
// The 28 character codes of a result, written in place: one flat string, no number-to-hex conversion.
const out = new Array<number>(28).fill(48);

/** The 28 hex digits of hash lanes (each pair finished into 53 bits). */
export function lanesToHex(lanes: HashLanes): string {
  finish(lanes[0], lanes[1], 0);
  finish(lanes[2], lanes[3], 14);
  return String.fromCharCode.apply(null, out);
}

/** Writes one pair's 53-bit value, 2^32 * (2097151 & h2) + (h1 >>> 0), as 14 hex digits at `at`. */
function finish(h1: number, h2: number, at: number): void {
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  const high = 2097151 & h2;
  for (let k = 5; k >= 0; k--) out[at + 5 - k] = HEX[(high >>> (4 * k)) & 15]!;
  for (let k = 7; k >= 0; k--) out[at + 13 - k] = HEX[(h1 >>> (4 * k)) & 15]!;
}
