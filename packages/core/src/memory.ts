import type { Chunk } from "./chunk.js";
import { OpenRathError, type OpenRathErrorOptions } from "./errors.js";
import type { JsonObject } from "./json.js";
import type { Session } from "./session.js";

/**
 * Where a memory entry lives: tenant → user → agent → session, each level optional but a level
 * can only be set when the levels before it are (`{ tenant, user }` is valid, `{ agent }` alone
 * is read as `{ tenant: "default", user: "default", agent }`). Missing leading levels are
 * `"default"`.
 */
export interface MemoryScope {
  readonly tenant?: string;
  readonly user?: string;
  readonly agent?: string;
  readonly session?: string;
}

/** The scope levels, outermost first. */
export const SCOPE_LEVELS = ["tenant", "user", "agent", "session"] as const;

/**
 * An entry to store. An entry is identified by its scope and id together: ids are unique within a
 * scope, so the same id at another scope (another tenant, user, agent or session) is another entry,
 * and remembering it never replaces or removes the first.
 */
export interface MemoryInput {
  /**
   * Stable id within the entry's scope (a non-empty string of at most 512 characters without
   * control characters); default: derived from scope and text ({@link memoryId}), so remembering
   * the same text twice at one scope keeps one entry.
   */
  readonly id?: string;
  /** The text to store: a non-blank string. */
  readonly text: string;
  /** Default: the scope the store was opened with, or the tenant level. */
  readonly scope?: MemoryScope;
  readonly metadata?: JsonObject;
  /** Where the text came from: a session id, a URL, a file. */
  readonly source?: string;
}

/** A stored entry. */
export interface MemoryEntry {
  readonly id: string;
  readonly text: string;
  /** The normalized scope (leading levels filled with `"default"`, trailing ones absent). */
  readonly scope: MemoryScope;
  readonly metadata?: JsonObject;
  readonly source?: string;
  /** Unix epoch milliseconds. */
  readonly createdAt: number;
}

/** A recalled entry with its relevance score (higher is better, always > 0). */
export interface MemoryHit {
  readonly entry: MemoryEntry;
  readonly score: number;
}

/** Options of {@link MemoryV1.recall}. */
export interface RecallOptions {
  /** Most hits: an integer from 0 to 10,000 (default 5). */
  readonly topK?: number;
  /**
   * The asking scope. A recall sees entries stored at this scope or at one of its enclosing
   * levels (a user's preferences are visible to that user's agents and sessions), never entries of
   * another tenant, user, agent or session. Default: the store's default scope (the scope it was
   * opened with, else `{ tenant: "default" }`).
   */
  readonly scope?: MemoryScope;
  /** Drop hits scoring below this (a finite number). */
  readonly minScore?: number;
}

/**
 * What {@link MemoryV1.forget} removes: the entries with these ids at exactly `scope` (default: the
 * store's default scope; ids are unique within a scope, so entries with the same id at other scopes
 * stay), or every entry at and below a scope.
 */
export type ForgetSelector =
  | { readonly ids: readonly string[]; readonly scope?: MemoryScope }
  | { readonly scope: MemoryScope };

/**
 * An open memory store (contract v1): the "Parameter" of the model, state that persists across
 * runs. Entries are recalled before an agent acts and committed after.
 */
export interface MemoryV1 {
  /**
   * Stores entries, replacing the entry with the same id *at the same scope* (an entry without an
   * id gets {@link memoryId}(scope, text)); entries with that id at other scopes are untouched.
   * Returns what was stored. A call that rejects stores nothing: its input is checked before
   * anything changes, and a store that fails midway leaves no part of the call behind. Once it
   * resolves, a store that claims `persistence` keeps the entries across a crash of the process.
   *
   * @throws {OpenRathError} `invalid_argument` for text that is not a non-blank string, a bad id,
   *   metadata that is not a JSON object, a source that is not a string; `invalid_scope`.
   */
  remember(entries: MemoryInput | readonly MemoryInput[]): Promise<MemoryEntry[]>;
  /**
   * Entries relevant to `query` within the asking scope, best first. Never returns a score <= 0
   * (a store with vector search may return weakly similar entries for any query; a full-text
   * store returns `[]` when no term matches). A blank query returns `[]`.
   */
  recall(query: string, options?: RecallOptions): Promise<MemoryHit[]>;
  /**
   * Extracts what is worth keeping from a session — by default with {@link extractMemories}: the
   * user's requests and the final answers — and stores it at `scope` (default: the store's default
   * scope). Returns the entries newly stored; committing the same session twice stores nothing new.
   */
  commit(session: Session, options?: { readonly scope?: MemoryScope }): Promise<MemoryEntry[]>;
  /**
   * Removes entries: by id at one scope, or a scope's subtree (see {@link ForgetSelector}); never
   * an entry of another tenant, user, agent or session. Returns how many were removed.
   */
  forget(selector: ForgetSelector): Promise<number>;
  /** Flushes and releases the store. Idempotent; other methods then throw `memory_closed`. */
  close(): Promise<void>;
}

/**
 * Memory error codes: `invalid_argument` (text that is not a string…), `memory_unsupported_version`
 * (a persisted store newer than this code), `memory_closed`, `invalid_scope`, `memory_corrupt` (a persisted store cannot
 * be read), `memory_unavailable` (a remote store cannot be reached), `memory_remote_error`,
 * `memory_unauthorized`, `memory_not_found`.
 */
export type MemoryErrorCode =
  | "invalid_argument"
  | "memory_unsupported_version"
  | "memory_closed"
  | "invalid_scope"
  | "memory_corrupt"
  | "memory_unavailable"
  | "memory_remote_error"
  | "memory_unauthorized"
  | "memory_not_found";

/** An error raised by a memory store or backend. */
export class MemoryError extends OpenRathError {
  declare readonly code: MemoryErrorCode;
  constructor(code: MemoryErrorCode, message: string, options: OpenRathErrorOptions = {}) {
    super(code, message, options);
  }
}

/**
 * The scope with leading levels filled with `"default"` and nothing after the last given level.
 *
 * @throws {MemoryError} `invalid_scope` for an unknown level, or a level that is not a non-empty
 *   string without `/`.
 */
export function normalizeScope(scope: MemoryScope = {}): MemoryScope {
  if (typeof scope !== "object" || scope === null) {
    throw new MemoryError(
      "invalid_scope",
      `A memory scope must be an object, got ${JSON.stringify(scope)}.`,
      { details: { scope } },
    );
  }
  const unknown = Object.keys(scope).filter((k) => !(SCOPE_LEVELS as readonly string[]).includes(k));
  if (unknown.length > 0) {
    throw new MemoryError(
      "invalid_scope",
      `Unknown memory scope level ${unknown.map((k) => JSON.stringify(k)).join(", ")}; the levels are ${SCOPE_LEVELS.join(", ")}.`,
      {
        details: { scope },
      },
    );
  }
  let last = -1;
  SCOPE_LEVELS.forEach((level, i) => {
    const value = scope[level];
    if (value === undefined) return;
    if (typeof value !== "string" || value === "" || value.includes("/")) {
      throw new MemoryError(
        "invalid_scope",
        `Memory scope ${level} must be a non-empty string without "/", got ${JSON.stringify(value)}.`,
        {
          details: { scope },
        },
      );
    }
    last = i;
  });
  const out: Record<string, string> = {};
  for (let i = 0; i <= Math.max(last, 0); i++) out[SCOPE_LEVELS[i]!] = scope[SCOPE_LEVELS[i]!] ?? "default";
  return out as MemoryScope;
}

/** The scope as a path, `tenant/user/agent/session` for the levels present. */
export function scopePath(scope: MemoryScope): string {
  const s = normalizeScope(scope);
  return SCOPE_LEVELS.map((l) => s[l])
    .filter((v): v is string => v !== undefined)
    .join("/");
}

/** Whether an entry stored at `entryScope` is visible to a recall asking at `askScope` (same or enclosing level). */
export function scopeVisible(entryScope: MemoryScope, askScope: MemoryScope): boolean {
  const entry = scopePath(entryScope);
  const ask = scopePath(askScope);
  return ask === entry || ask.startsWith(`${entry}/`);
}

/** Whether `entryScope` is `scope` or inside it (what `forget({ scope })` removes). */
export function scopeContains(scope: MemoryScope, entryScope: MemoryScope): boolean {
  return scopeVisible(scope, entryScope);
}

/** A stable id for an entry from its scope and text (FNV-1a, 64 bits as hex), so duplicates collapse. */
export function memoryId(scope: MemoryScope, text: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  const input = `${scopePath(scope)}\u0000${text}`;
  for (let i = 0; i < input.length; i++) {
    const c = input.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
  }
  return `m_${(h1 >>> 0).toString(16).padStart(8, "0")}${(h2 >>> 0).toString(16).padStart(8, "0")}`;
}

/**
 * What a commit keeps by default: each user request and each final assistant answer (text turns
 * that did not call tools) of the session, tagged with the session as source. Recalled memory,
 * events and tool traffic are left out.
 */
export function extractMemories(session: Session): MemoryInput[] {
  const out: MemoryInput[] = [];
  for (const chunk of session.chunks as readonly Chunk[]) {
    if (chunk.kind === "user" && !chunk.untrusted && chunk.content.trim() !== "") {
      out.push({ text: chunk.content.trim(), metadata: { role: "user" }, source: session.id });
    } else if (
      chunk.kind === "assistant" &&
      !chunk.toolCalls?.length &&
      chunk.content &&
      chunk.content.trim() !== ""
    ) {
      out.push({
        text: chunk.content.trim(),
        metadata: { role: "assistant", ...(chunk.author ? { author: chunk.author } : {}) },
        source: session.id,
      });
    }
  }
  return out;
}
