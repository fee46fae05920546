import {
  type ForgetSelector,
  type JsonObject,
  type MemoryEntry,
  MemoryError,
  type MemoryHit,
  type MemoryInput,
  type MemoryScope,
  OpenRathError,
  type RecallOptions,
  type Session,
} from "@openrath/core";
import { extractMemories, memoryId, normalizeScope } from "@openrath/core/backend";
import type { Bm25Store } from "./bm25-store.js";
import type { Settings } from "./settings.js";

function invalid(message: string, details: Record<string, unknown> = {}): OpenRathError {
  return new OpenRathError("invalid_argument", message, { details });
}

function isJsonValue(value: unknown, depth = 0): boolean {
  if (depth > 64) return false;
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (Array.isArray(value)) return value.every((v) => isJsonValue(v, depth + 1));
  if (typeof value === "object") {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return false;
    return Object.values(value as object).every((v) => isJsonValue(v, depth + 1));
  }
  return false;
}

function checkScope(scope: unknown, where: string): MemoryScope | undefined {
  if (scope === undefined) return undefined;
  if (typeof scope !== "object" || scope === null || Array.isArray(scope)) {
    throw new MemoryError(
      "invalid_scope",
      `${where} must be an object such as { tenant: "acme", user: "ada" }, got ${JSON.stringify(scope)}.`,
      { details: { scope } },
    );
  }
  return normalizeScope(scope as MemoryScope);
}

/**
 * One handle on a {@link Bm25Store}. Handles of one directory share the store; each has its own
 * default scope, ranking settings and closed state.
 */
export class Bm25MemoryHandle {
  private closed = false;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly store: Bm25Store,
    private readonly settings: Settings,
    private readonly defaultScope: MemoryScope,
    readonly directory: string | undefined,
    private readonly releaseStore: () => Promise<void>,
  ) {}

  async remember(entries: MemoryInput | readonly MemoryInput[]): Promise<MemoryEntry[]> {
    this.checkOpen("remember");
    const list = Array.isArray(entries) ? (entries as readonly unknown[]) : [entries];
    const now = Date.now();
    const parsed = list.map((input, i) =>
      this.toEntry(input, Array.isArray(entries) ? `entries[${i}]` : "entry", now),
    );
    return this.store.put(parsed, false);
  }

  async recall(query: string, options: RecallOptions = {}): Promise<MemoryHit[]> {
    this.checkOpen("recall");
    if (typeof query !== "string") {
      throw invalid(`recall(query) takes a string, got ${typeof query}.`, { query });
    }
    if (typeof options !== "object" || options === null) {
      throw invalid(`recall options must be an object, got ${JSON.stringify(options)}.`);
    }
    const topK = options.topK ?? 5;
    if (typeof topK !== "number" || !Number.isInteger(topK) || topK < 0) {
      throw invalid(`recall option topK must be an integer >= 0, got ${JSON.stringify(topK)}.`, { topK });
    }
    const minScore = options.minScore ?? Number.NEGATIVE_INFINITY;
    if (typeof minScore !== "number" || Number.isNaN(minScore)) {
      throw invalid(`recall option minScore must be a number, got ${JSON.stringify(minScore)}.`, {
        minScore,
      });
    }
    const scope = checkScope(options.scope, "recall option scope") ?? this.defaultScope;
    return this.store.recall({ query, scope, topK, minScore, ranking: this.settings });
  }

  async commit(session: Session, options: { readonly scope?: MemoryScope } = {}): Promise<MemoryEntry[]> {
    this.checkOpen("commit");
    if (
      typeof session !== "object" ||
      session === null ||
      !Array.isArray((session as { chunks?: unknown }).chunks) ||
      typeof (session as { id?: unknown }).id !== "string"
    ) {
      throw invalid("commit(session) takes a Session.");
    }
    const scope = checkScope(options?.scope, "commit option scope") ?? this.defaultScope;
    const now = Date.now();
    const entries = extractMemories(session).map((input) =>
      this.toEntry({ ...input, scope: input.scope ?? scope }, "extracted memory", now),
    );
    return this.store.put(entries, true);
  }

  async forget(selector: ForgetSelector): Promise<number> {
    this.checkOpen("forget");
    const s = selector as { ids?: unknown; scope?: unknown } | null;
    if (typeof s === "object" && s !== null && "ids" in s && s.ids !== undefined) {
      if (!Array.isArray(s.ids) || s.ids.some((id) => typeof id !== "string")) {
        throw invalid(`forget({ ids }) takes an array of entry id strings, got ${JSON.stringify(s.ids)}.`);
      }
      return this.store.deleteIds(s.ids as string[]);
    }
    if (typeof s === "object" && s !== null && "scope" in s && s.scope !== undefined) {
      return this.store.deleteScope(checkScope(s.scope, "forget({ scope })")!);
    }
    throw invalid(
      `forget takes { ids: string[] } or { scope: MemoryScope }, got ${JSON.stringify(selector)}.`,
    );
  }

  /** Writes pending changes to the snapshot file now (no-op for a store kept in memory). */
  async flush(): Promise<void> {
    this.checkOpen("flush");
    await this.store.flush();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.closing ??= this.releaseStore();
    await this.closing;
  }

  private checkOpen(method: string): void {
    if (this.closed) {
      throw new MemoryError(
        "memory_closed",
        `Cannot ${method}: this bm25 memory store was closed. Open it again.`,
      );
    }
  }

  private toEntry(input: unknown, where: string, now: number): MemoryEntry {
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      throw invalid(
        `remember: ${where} must be an object { text, id?, scope?, metadata?, source? }, got ${JSON.stringify(input)}.`,
      );
    }
    const { id, text, scope, metadata, source } = input as Record<string, unknown>;
    if (typeof text !== "string" || text.trim() === "") {
      throw invalid(`remember: ${where}.text must be a non-blank string, got ${JSON.stringify(text)}.`, {
        text,
      });
    }
    if (id !== undefined && (typeof id !== "string" || id === "")) {
      throw invalid(
        `remember: ${where}.id must be a non-empty string when given, got ${JSON.stringify(id)}.`,
        { id },
      );
    }
    if (
      metadata !== undefined &&
      (typeof metadata !== "object" || metadata === null || Array.isArray(metadata) || !isJsonValue(metadata))
    ) {
      throw invalid(
        `remember: ${where}.metadata must be a JSON object (plain objects, arrays, strings, finite numbers, booleans, null).`,
      );
    }
    if (source !== undefined && typeof source !== "string") {
      throw invalid(`remember: ${where}.source must be a string when given, got ${JSON.stringify(source)}.`, {
        source,
      });
    }
    const normalized = checkScope(scope, `remember: ${where}.scope`) ?? this.defaultScope;
    return {
      id: (id as string | undefined) ?? memoryId(normalized, text),
      text,
      scope: normalized,
      createdAt: now,
      ...(metadata === undefined ? {} : { metadata: metadata as JsonObject }),
      ...(source === undefined ? {} : { source }),
    };
  }
}
