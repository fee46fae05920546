import { createHash } from "node:crypto";
import type { MemoryScope } from "@openrath/core";
import { normalizeScope, SCOPE_LEVELS } from "@openrath/core/backend";

/** Where entries live unless option `root` says otherwise: the caller's memories, under `openrath`. */
export const DEFAULT_ROOT = "viking://~/memories/openrath";

/**
 * The directory that holds a scope's own entries. Scope values never encode to a name starting
 * with `_`, so it cannot collide with a nested scope's directory.
 */
export const ENTRIES_DIR = "_entries";

const VERBATIM = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/**
 * A scope value or id as one URI path segment: verbatim when it is plain (`bob`, `m_0123…`,
 * a UUID), else `x-` and the hex of its UTF-8 bytes (reversible, collision-free), else for long
 * values `h-` and its SHA-256. Never starts with `_` or `.`, never contains `/`, `{`, `%` or `~`.
 */
export function segment(value: string): string {
  if (VERBATIM.test(value) && !value.startsWith("x-") && !value.startsWith("h-")) return value;
  const bytes = new TextEncoder().encode(value);
  if (bytes.length <= 60) return `x-${Buffer.from(bytes).toString("hex")}`;
  return `h-${createHash("sha256").update(bytes).digest("hex")}`;
}

/** Maps scopes and ids to OpenViking URIs under one root, and echoed URIs back. */
export class Layout {
  /** The root without a trailing slash, as configured (`viking://~/…` stays unexpanded). */
  readonly root: string;
  private readonly home: boolean;

  constructor(root: string) {
    this.root = root.replace(/\/+$/, "");
    this.home = this.root.startsWith("viking://~/");
  }

  /** `<root>/<tenant>/<user>/<agent>/<session>` for the levels present. */
  scopeDir(scope: MemoryScope): string {
    const s = normalizeScope(scope);
    const parts = SCOPE_LEVELS.map((l) => s[l])
      .filter((v): v is string => v !== undefined)
      .map(segment);
    return `${this.root}/${parts.join("/")}`;
  }

  /** The directory holding the entries stored exactly at `scope`. */
  entriesDir(scope: MemoryScope): string {
    return `${this.scopeDir(scope)}/${ENTRIES_DIR}`;
  }

  /** The file of entry `id` at `scope`. */
  entryUri(scope: MemoryScope, id: string): string {
    return `${this.entriesDir(scope)}/${this.entryFileName(id)}`;
  }

  /** The file name of entry `id`. */
  entryFileName(id: string): string {
    return `${segment(id)}.md`;
  }

  /**
   * The entries directories a recall at `scope` may read: the scope's own and each enclosing
   * level's, outermost first.
   */
  visibleEntriesDirs(scope: MemoryScope): string[] {
    const s = normalizeScope(scope);
    const dirs: string[] = [];
    const prefix: Record<string, string> = {};
    for (const level of SCOPE_LEVELS) {
      const value = s[level];
      if (value === undefined) break;
      prefix[level] = value;
      dirs.push(this.entriesDir(prefix as MemoryScope));
    }
    return dirs;
  }

  /**
   * `uri` as the server echoes it (`viking://user/<uid>/…`, the expanded form) written the way
   * this layout writes URIs (`viking://~/…` when the root uses `~`).
   */
  canonical(uri: string): string {
    const trimmed = uri.replace(/\/+$/, "");
    if (!this.home) return trimmed;
    const match = /^viking:\/\/user\/[^/]+\/(.*)$/.exec(trimmed);
    return match ? `viking://~/${match[1]}` : trimmed;
  }

  /** The directory part of a URI (canonical form). */
  parentOf(uri: string): string {
    const c = this.canonical(uri);
    return c.slice(0, c.lastIndexOf("/"));
  }

  /** Whether `uri` (echoed by the server) is an entry file directly inside one of `dirs`. */
  isEntryIn(uri: string, dirs: ReadonlySet<string>): boolean {
    const c = this.canonical(uri);
    const name = c.slice(c.lastIndexOf("/") + 1);
    if (!name.endsWith(".md") || name.startsWith(".")) return false;
    return dirs.has(this.parentOf(uri));
  }

  /** Whether `uri` is an entry file anywhere under this root (its parent is an entries directory). */
  isEntry(uri: string): boolean {
    const c = this.canonical(uri);
    if (!c.startsWith(`${this.root}/`)) return false;
    const name = c.slice(c.lastIndexOf("/") + 1);
    const parent = this.parentOf(uri);
    return name.endsWith(".md") && !name.startsWith(".") && parent.endsWith(`/${ENTRIES_DIR}`);
  }
}
