/**
 * A 106-bit non-cryptographic hash of a string (two 53-bit cyrb53 lanes computed in one pass),
 * as 28 hex digits. Stable across runs and platforms; used to recognise a model request again on
 * replay.
 */
export function hashString(text: string): string {
  let a1 = 0xdeadbeef ^ 0x9e3779b1;
  let a2 = 0x41c6ce57 ^ 0x9e3779b1;
  let b1 = 0xdeadbeef ^ 0x85ebca6b;
  let b2 = 0x41c6ce57 ^ 0x85ebca6b;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    a1 = Math.imul(a1 ^ ch, 2654435761);
    a2 = Math.imul(a2 ^ ch, 1597334677);
    b1 = Math.imul(b1 ^ ch, 2654435761);
    b2 = Math.imul(b2 ^ ch, 1597334677);
  }
  return finish(a1, a2).toString(16).padStart(14, "0") + finish(b1, b2).toString(16).padStart(14, "0");
}

function finish(h1: number, h2: number): number {
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
