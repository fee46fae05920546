import type { MemoryScope } from "@openrath/core";
import { SCOPE_LEVELS, scopePath } from "@openrath/core/backend";

/**
 * The paths of `scope` and of every level enclosing it, outermost first: the scopes whose entries
 * a recall asking at `scope` may see (`a/b/c` → `a`, `a/b`, `a/b/c`).
 */
export function visiblePaths(scope: MemoryScope): string[] {
  const parts = scopePath(scope).split("/");
  return parts.map((_, i) => parts.slice(0, i + 1).join("/"));
}

/** The scope a normalized path stands for (`a/b` → `{ tenant: "a", user: "b" }`). */
export function scopeFromPath(path: string): MemoryScope {
  const scope: Record<string, string> = {};
  path.split("/").forEach((value, i) => {
    scope[SCOPE_LEVELS[i]!] = value;
  });
  return scope as MemoryScope;
}
