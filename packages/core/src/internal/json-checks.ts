/**
 * How deeply JSON values held by a session (event data, carried usage, lineage extras, placement
 * specs) may nest. Deeper values are refused with a coded error when they come in, because
 * serializing them later (`JSON.stringify`, a session log, a database) would overflow the stack.
 */
export const MAX_JSON_DEPTH = 512;

/**
 * Whether `value` nests arrays or objects more than `max` levels deep (a scalar is depth 0, `[]`
 * depth 1). Iterative, so it answers for values of any depth, cyclic ones included (as `true`).
 */
export function exceedsDepth(value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  if (typeof value !== "object" || value === null) return false;
  const stack: { value: object; depth: number }[] = [{ value, depth: 1 }];
  while (stack.length > 0) {
    const top = stack.pop()!;
    if (top.depth > max) return true;
    const children = Array.isArray(top.value) ? top.value : Object.values(top.value);
    for (const child of children) {
      if (typeof child === "object" && child !== null) stack.push({ value: child, depth: top.depth + 1 });
    }
  }
  return false;
}

const isPlain = (v: object) => {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null || Array.isArray(v);
};

/**
 * Whether `a` and `b` are the same data: equal scalars, or arrays / plain objects with equal
 * members (object key order ignored). Other objects are equal only to themselves.
 */
export function sameData(a: unknown, b: unknown, depth = 0): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (depth > MAX_JSON_DEPTH || !isPlain(a) || !isPlain(b) || Array.isArray(a) !== Array.isArray(b))
    return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => sameData(v, bb[i], depth + 1));
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  return ka.every((k) => Object.hasOwn(rb, k) && sameData(ra[k], rb[k], depth + 1));
}

/** The top-level keys whose values differ between two specs (for error messages; values are not shown). */
export function differingKeys(a: unknown, b: unknown): string[] {
  const keysOf = (v: unknown) =>
    typeof v === "object" && v !== null && !Array.isArray(v) ? Object.keys(v) : [];
  const ra = (a ?? {}) as Record<string, unknown>;
  const rb = (b ?? {}) as Record<string, unknown>;
  const keys = [...new Set([...keysOf(a), ...keysOf(b)])];
  return keys.filter((k) => !sameData(ra[k], rb[k])).sort();
}

/**
 * A frozen shallow copy of `source`, built property by property: V8 reads the fields of a frozen
 * object made by spread (`Object.freeze({ ...x })`) tens of times slower, and usage is read on
 * every append. A `__proto__` key stays a key.
 */
export function frozenCopy<T extends object>(source: T): T {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(source)) {
    const value = (source as Record<string, unknown>)[key];
    if (key === "__proto__") {
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    } else {
      out[key] = value;
    }
  }
  return Object.freeze(out) as T;
}
