import { OpenRathError } from "./errors.js";
import type { JsonObject } from "./json.js";
import {
  extractMemories,
  type MemoryEntry,
  MemoryError,
  type MemoryScope,
  memoryId,
  normalizeScope,
} from "./memory.js";
import type { Session } from "./session.js";

/**
 * The argument checks every memory backend applies, written once so that the same input is
 * accepted or refused with the same code by every backend. Backends call them first and only then
 * change anything, so a refused call changes nothing.
 */

/** The longest entry id accepted, in UTF-16 code units. */
export const MAX_MEMORY_ID_LENGTH = 512;
/** The largest `topK` a recall accepts. */
export const MAX_RECALL_TOP_K = 10_000;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** Deepest nesting of entry metadata. */
const MAX_METADATA_DEPTH = 32;

function invalid(message: string, details: Record<string, unknown> = {}): OpenRathError {
  return new OpenRathError("invalid_argument", message, { details });
}

function show(value: unknown): string {
  if (value === undefined) return "undefined";
  try {
    const text = JSON.stringify(value);
    if (text === undefined) return String(value);
    return text.length > 80 ? `${text.slice(0, 77)}...` : text;
  } catch {
    return String(value);
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function isJsonValue(value: unknown, depth: number): boolean {
  if (depth > MAX_METADATA_DEPTH) return false;
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (Array.isArray(value)) return value.every((v) => isJsonValue(v, depth + 1));
  if (isPlainObject(value)) return Object.values(value).every((v) => isJsonValue(v, depth + 1));
  return false;
}

/**
 * A scope argument: `undefined` gives `fallback`, anything else is normalized.
 *
 * @throws {MemoryError} `invalid_scope` for a scope that is not an object or has a bad level.
 */
export function checkMemoryScope(scope: unknown, where: string, fallback: MemoryScope): MemoryScope {
  if (scope === undefined) return fallback;
  if (!isPlainObject(scope)) {
    throw new MemoryError(
      "invalid_scope",
      `${where} must be an object such as { tenant: "acme", user: "ada" }, got ${show(scope)}.`,
      { details: { scope } },
    );
  }
  return normalizeScope(scope as MemoryScope);
}

/**
 * An entry id: a non-empty string of at most {@link MAX_MEMORY_ID_LENGTH} code units without
 * control characters or lone surrogates (ids name files and keys in backends).
 *
 * @throws {OpenRathError} `invalid_argument`.
 */
export function checkMemoryId(id: unknown, where: string): string {
  if (
    typeof id !== "string" ||
    id === "" ||
    id.length > MAX_MEMORY_ID_LENGTH ||
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
    /[\u0000-\u001f\u007f]/.test(id) ||
    LONE_SURROGATE.test(id)
  ) {
    throw invalid(
      `${where} must be a non-empty string of at most ${MAX_MEMORY_ID_LENGTH} characters without control characters, got ${show(id)}.`,
      { id },
    );
  }
  return id;
}

/**
 * Checks what `remember` was given and returns the entries to store: text a non-blank string,
 * `id` (default {@link memoryId}(scope, text)), `scope` (default `defaultScope`), `metadata` a JSON
 * object, `source` a string. Two inputs with the same id at the same scope collapse into the last
 * one, at the position of the last. Nothing is stored by this function; a backend stores the
 * result only when it is returned.
 *
 * @throws {OpenRathError} `invalid_argument` naming the entry and field; {@link MemoryError}
 *   `invalid_scope`.
 */
export function parseMemoryInputs(entries: unknown, defaultScope: MemoryScope, now: number): MemoryEntry[] {
  const list = Array.isArray(entries) ? (entries as readonly unknown[]) : [entries];
  const many = Array.isArray(entries);
  const parsed = list.map((input, i) =>
    parseMemoryInput(input, many ? `entries[${i}]` : "entry", defaultScope, now),
  );
  const last = new Map<string, number>();
  parsed.forEach((entry, i) => {
    last.set(memoryKey(entry.scope, entry.id), i);
  });
  return parsed.filter((entry, i) => last.get(memoryKey(entry.scope, entry.id)) === i);
}

function parseMemoryInput(
  input: unknown,
  where: string,
  defaultScope: MemoryScope,
  now: number,
): MemoryEntry {
  if (!isPlainObject(input)) {
    throw invalid(
      `remember: ${where} must be an object { text, id?, scope?, metadata?, source? }, got ${show(input)}.`,
    );
  }
  const { id, text, scope, metadata, source } = input;
  if (typeof text !== "string" || text.trim() === "") {
    throw invalid(`remember: ${where}.text must be a non-blank string, got ${show(text)}.`, {
      field: "text",
    });
  }
  if (id !== undefined) checkMemoryId(id, `remember: ${where}.id`);
  if (metadata !== undefined && (!isPlainObject(metadata) || !isJsonValue(metadata, 0))) {
    throw invalid(
      `remember: ${where}.metadata must be a JSON object (plain objects, arrays, strings, finite numbers, booleans, null; at most ${MAX_METADATA_DEPTH} levels deep).`,
      { field: "metadata" },
    );
  }
  if (source !== undefined && typeof source !== "string") {
    throw invalid(`remember: ${where}.source must be a string when given, got ${show(source)}.`, {
      field: "source",
    });
  }
  const normalized = checkMemoryScope(scope, `remember: ${where}.scope`, defaultScope);
  return {
    id: (id as string | undefined) ?? memoryId(normalized, text),
    text,
    scope: normalized,
    createdAt: now,
    ...(metadata === undefined ? {} : { metadata: structuredClone(metadata) as JsonObject }),
    ...(source === undefined ? {} : { source }),
  };
}

/** What {@link parseRecallArgs} returns. */
export interface ParsedRecall {
  readonly query: string;
  readonly topK: number;
  /** `-Infinity` when not given. */
  readonly minScore: number;
  readonly scope: MemoryScope;
}

/**
 * Checks `recall(query, options)`: `query` a string, `topK` an integer from 0 to
 * {@link MAX_RECALL_TOP_K} (default 5), `minScore` a finite number, `scope` (default `defaultScope`).
 *
 * @throws {OpenRathError} `invalid_argument`; {@link MemoryError} `invalid_scope`.
 */
export function parseRecallArgs(query: unknown, options: unknown, defaultScope: MemoryScope): ParsedRecall {
  if (typeof query !== "string")
    throw invalid(`recall(query) takes a string, got ${show(query)}.`, { query });
  if (options === undefined) options = {};
  if (!isPlainObject(options)) throw invalid(`recall options must be an object, got ${show(options)}.`);
  const { topK = 5, minScore, scope } = options;
  if (typeof topK !== "number" || !Number.isInteger(topK) || topK < 0 || topK > MAX_RECALL_TOP_K) {
    throw invalid(`recall option topK must be an integer from 0 to ${MAX_RECALL_TOP_K}, got ${show(topK)}.`, {
      topK,
    });
  }
  if (minScore !== undefined && (typeof minScore !== "number" || !Number.isFinite(minScore))) {
    throw invalid(`recall option minScore must be a finite number, got ${show(minScore)}.`, { minScore });
  }
  return {
    query,
    topK,
    minScore: (minScore as number | undefined) ?? Number.NEGATIVE_INFINITY,
    scope: checkMemoryScope(scope, "recall option scope", defaultScope),
  };
}

/** What {@link parseForgetArgs} returns. */
export type ParsedForget =
  | { readonly kind: "ids"; readonly ids: readonly string[]; readonly scope: MemoryScope }
  | { readonly kind: "scope"; readonly scope: MemoryScope };

/**
 * Checks `forget(selector)`: `{ ids, scope? }` (ids at exactly `scope`, default `defaultScope`;
 * repeats removed) or `{ scope }` (the scope's subtree).
 *
 * @throws {OpenRathError} `invalid_argument`; {@link MemoryError} `invalid_scope`.
 */
export function parseForgetArgs(selector: unknown, defaultScope: MemoryScope): ParsedForget {
  if (isPlainObject(selector) && selector.ids !== undefined) {
    const { ids } = selector;
    if (!Array.isArray(ids)) {
      throw invalid(`forget({ ids }) takes an array of entry ids, got ${show(ids)}.`);
    }
    ids.forEach((id, i) => {
      checkMemoryId(id, `forget: ids[${i}]`);
    });
    return {
      kind: "ids",
      ids: [...new Set(ids as string[])],
      scope: checkMemoryScope(selector.scope, "forget({ ids, scope })", defaultScope),
    };
  }
  if (isPlainObject(selector) && selector.scope !== undefined) {
    return { kind: "scope", scope: checkMemoryScope(selector.scope, "forget({ scope })", defaultScope) };
  }
  throw invalid(`forget takes { ids: string[], scope? } or { scope: MemoryScope }, got ${show(selector)}.`);
}

/** What {@link parseCommitArgs} returns: the entries the commit would store, at its scope. */
export interface ParsedCommit {
  readonly scope: MemoryScope;
  /** Extracted with {@link extractMemories}, ids from scope and text, duplicates collapsed. */
  readonly entries: readonly MemoryEntry[];
}

/**
 * Checks `commit(session, options)` and extracts its entries (a backend stores those it does not
 * hold yet).
 *
 * @throws {OpenRathError} `invalid_argument` for something that is not a Session; {@link MemoryError}
 *   `invalid_scope`.
 */
export function parseCommitArgs(
  session: unknown,
  options: unknown,
  defaultScope: MemoryScope,
  now: number,
): ParsedCommit {
  const s = session as { chunks?: unknown; id?: unknown } | null;
  if (typeof s !== "object" || s === null || !Array.isArray(s.chunks) || typeof s.id !== "string") {
    throw invalid(`commit(session) takes a Session, got ${show(session)}.`);
  }
  if (options === undefined) options = {};
  if (!isPlainObject(options)) throw invalid(`commit options must be an object, got ${show(options)}.`);
  const scope = checkMemoryScope(options.scope, "commit option scope", defaultScope);
  const inputs = extractMemories(session as Session).map((input) => ({ ...input, scope }));
  return { scope, entries: inputs.length === 0 ? [] : parseMemoryInputs(inputs, scope, now) };
}

/**
 * The key that identifies an entry: ids are unique within a scope, so the same id at two scopes
 * names two entries. `scope` must be normalized.
 */
export function memoryKey(scope: MemoryScope, id: string): string {
  return `${scope.tenant ?? ""}/${scope.user ?? ""}/${scope.agent ?? ""}/${scope.session ?? ""}\u0000${id}`;
}
