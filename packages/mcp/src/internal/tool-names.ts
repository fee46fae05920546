const VALID = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX = 64;

/** FNV-1a, 32 bits, as 8 hex digits: a short stable suffix that keeps cut names apart. */
function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, "0");
}

/** `name` with every character outside `[a-zA-Z0-9_-]` replaced by `_`, cut to 64 with a hash suffix. */
export function sanitizeToolName(name: string): string {
  let out = name.replace(/[^a-zA-Z0-9_-]/g, "_");
  if (out === "") out = "tool";
  if (out.length > MAX) out = `${out.slice(0, MAX - 9)}_${shortHash(name)}`;
  return out;
}

/** Joins a prefix and a tool name with `_`, unless the prefix already ends in `_` or `-`. */
export function prefixed(prefix: string | undefined, name: string): string {
  if (!prefix) return name;
  return /[_-]$/.test(prefix) ? `${prefix}${name}` : `${prefix}_${name}`;
}

/**
 * Names the model can call for `names` (in order): prefixed, sanitized to the tool-name rules and
 * made unique (`_2`, `_3`… on a clash). Returns one entry per input, in input order.
 */
export function exposedToolNames(names: readonly string[], prefix?: string): string[] {
  const taken = new Set<string>();
  return names.map((name) => {
    const base = sanitizeToolName(prefixed(prefix, name));
    let candidate = base;
    for (let n = 2; taken.has(candidate); n++) {
      const suffix = `_${n}`;
      candidate = `${base.slice(0, MAX - suffix.length)}${suffix}`;
    }
    taken.add(candidate);
    return candidate;
  });
}

/** Whether `name` already follows the tool-name rules. */
export function isValidToolName(name: string): boolean {
  return VALID.test(name);
}
