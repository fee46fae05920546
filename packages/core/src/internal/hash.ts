/**
 * A 106-bit non-cryptographic hash of a string (two 53-bit cyrb53 lanes), as 27 hex digits.
 * Stable across runs and platforms; used to recognise a model request again on replay.
 */
export function hashString(text: string): string {
  return (
    lane(text, 0x9e3779b1).toString(16).padStart(14, "0") +
    lane(text, 0x85ebca6b).toString(16).padStart(14, "0")
  );
}

function lane(text: string, seed: number): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
