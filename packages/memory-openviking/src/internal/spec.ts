import { MemoryError, type MemoryScope } from "@openrath/core";
import { normalizeScope, SCOPE_LEVELS } from "@openrath/core/backend";

const LEVELS = new Set<string>(SCOPE_LEVELS);

/**
 * {@link normalizeScope} that also refuses what it would silently ignore: a scope that is not an
 * object, and unknown keys (a misspelt `tennant` would otherwise widen the scope to the default
 * tenant).
 *
 * @throws {MemoryError} `invalid_scope`.
 */
export function checkScope(scope: unknown, what = "scope"): MemoryScope {
  if (typeof scope !== "object" || scope === null || Array.isArray(scope)) {
    throw new MemoryError(
      "invalid_scope",
      `A memory ${what} must be an object such as { tenant: "acme", user: "bob" }; got ${describe(scope)}.`,
      { details: { scope } },
    );
  }
  for (const key of Object.keys(scope)) {
    if (!LEVELS.has(key)) {
      throw new MemoryError(
        "invalid_scope",
        `A memory ${what} has the unknown level "${key}". Valid levels: ${SCOPE_LEVELS.join(", ")}.`,
        { details: { scope, field: key } },
      );
    }
  }
  return normalizeScope(scope as MemoryScope);
}

/**
 * What `memory: "openviking"` (or `backend.open(spec)`) takes: the store's default scope, used by
 * `remember` entries without a scope, `recall` without `scope` and `commit` without `scope`.
 */
export interface OpenVikingMemorySpec {
  /** Default `{ tenant: "default" }`. */
  readonly scope?: MemoryScope;
}

/** A spec with its default filled in. */
export interface ResolvedOpenVikingMemorySpec {
  readonly scope: MemoryScope;
}

function describe(value: unknown): string {
  if (value === undefined) return "undefined";
  try {
    const text = JSON.stringify(value);
    return text.length > 80 ? `${text.slice(0, 77)}...` : text;
  } catch {
    return String(value);
  }
}
