import { rename } from "node:fs/promises";
import { join } from "node:path";
import {
  type JsonObject,
  type MemoryEntry,
  MemoryError,
  type MemoryHit,
  type MemoryScope,
  OpenRathError,
} from "@openrath/core";
import { scopeContains, scopePath, scopeVisible } from "@openrath/core/backend";
import { acquireLock, releaseLock } from "./lock-file.js";
import {
  type CompactIndex,
  compactFromOrama,
  OramaIndex,
  type OramaSaved,
  type ScoredId,
  type StoredDoc,
} from "./orama-index.js";
import { scopeFromPath, visiblePaths } from "./scope-paths.js";
import type { Settings } from "./settings.js";
import {
  encodeSnapshot,
  readSnapshot,
  removeLeftoverTempFiles,
  SNAPSHOT_VERSION,
  type Snapshot,
  SnapshotProblem,
  writeFileAtomic,
} from "./snapshot-file.js";
import { tokenize } from "./tokenize.js";

/** The snapshot file inside a store directory. */
export const SNAPSHOT_FILE = "memory.json";
/** The lock file inside a store directory. */
export const LOCK_FILE = "memory.lock";

/**
 * A full-text recall filters inside Orama only when fewer than 1 in this many entries are visible
 * to it; otherwise it over-fetches and drops the invisible hits.
 */
const FILTER_BELOW = 16;

/** What a recall asks for, parsed. */
export interface RecallRequest {
  readonly query: string;
  readonly scope: MemoryScope;
  readonly topK: number;
  readonly minScore: number;
  /** The ranking settings of the asking handle (handles of one store may rank differently). */
  readonly ranking: Pick<Settings, "search" | "relevance" | "minSimilarity" | "hybridWeights">;
}

/**
 * One memory store: an Orama index, and for a store with a directory, its snapshot file, lock,
 * and debounced saving. Handles ({@link Bm25MemoryHandle}) share one store per directory.
 * Mutations run one at a time (embedding is asynchronous); recalls run freely.
 */
export class Bm25Store {
  readonly settings: Settings;
  /** The snapshot file, `undefined` for a store kept in memory only. */
  readonly file: string | undefined;
  private readonly lock: string | undefined;
  private index: OramaIndex;
  private embedModel: string | null;
  private writes: Promise<unknown> = Promise.resolve();
  private saving: Promise<void> = Promise.resolve();
  private dirty = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  private constructor(settings: Settings, file: string | undefined, lock: string | undefined) {
    this.settings = settings;
    this.file = file;
    this.lock = lock;
    this.index = new OramaIndex(undefined, settings.stopWords);
    this.embedModel = settings.embedModel ?? null;
  }

  /** A store kept in memory only. */
  static inMemory(settings: Settings): Bm25Store {
    return new Bm25Store(settings, undefined, undefined);
  }

  /**
   * Opens the store of directory `dir` (which must exist): takes its lock, loads its snapshot
   * (or the backup, see the `onCorrupt` option), and embeds entries that have no vector yet.
   *
   * @throws {MemoryError} `memory_corrupt` for a snapshot that cannot be used, `memory_unavailable`
   *   when another process holds the directory.
   */
  static async open(settings: Settings, dir: string): Promise<Bm25Store> {
    const lock = join(dir, LOCK_FILE);
    await acquireLock(lock);
    const file = join(dir, SNAPSHOT_FILE);
    const store = new Bm25Store(settings, file, lock);
    try {
      const leftovers = await removeLeftoverTempFiles(file);
      if (leftovers.length > 0) {
        settings.onWarning({
          code: "temp_files_removed",
          message: `Removed ${leftovers.length} temporary file(s) left by an interrupted save next to ${file} (${leftovers.join(", ")}); the snapshot itself is intact.`,
          file,
        });
      }
      await store.loadFrom(file);
      if (settings.embed) await store.exclusive(() => store.backfillVectors());
      return store;
    } catch (error) {
      clearTimeout(store.timer);
      await releaseLock(lock);
      throw error;
    }
  }

  /** Number of entries. */
  get size(): number {
    return this.index.size;
  }

  has(id: string): boolean {
    return this.index.has(id);
  }

  /**
   * Stores `entries`, replacing entries with the same ids (or, with `onlyNew`, skipping them).
   * Returns what was stored.
   */
  put(entries: readonly MemoryEntry[], onlyNew: boolean): Promise<MemoryEntry[]> {
    return this.exclusive(async () => {
      const byId = new Map<string, MemoryEntry>();
      for (const entry of entries) {
        if (onlyNew && (this.index.has(entry.id) || byId.has(entry.id))) continue;
        byId.set(entry.id, entry);
      }
      const fresh = [...byId.values()];
      if (fresh.length === 0) return [];
      let vectors: number[][] | undefined;
      if (this.settings.embed) {
        vectors = await this.embedTexts(fresh.map((e) => e.text));
        await this.adoptDimensions(vectors[0]!.length, new Map());
      }
      fresh.forEach((entry, i) => {
        this.index.put(toDoc(entry), vectors?.[i]);
      });
      this.markDirty();
      return fresh.map(copyEntry);
    });
  }

  /** Removes entries by id; returns how many existed. */
  deleteIds(ids: readonly string[]): Promise<number> {
    return this.exclusive(async () => {
      let removed = 0;
      for (const id of new Set(ids)) if (this.index.delete(id)) removed++;
      if (removed > 0) this.markDirty();
      return removed;
    });
  }

  /** Removes every entry at or below `scope`; returns how many. */
  deleteScope(scope: MemoryScope): Promise<number> {
    return this.exclusive(async () => {
      let removed = 0;
      for (const doc of this.index.all()) {
        if (scopeContains(scope, scopeFromPath(doc.scope)) && this.index.delete(doc.id)) removed++;
      }
      if (removed > 0) this.markDirty();
      return removed;
    });
  }

  /** The entries relevant to the request, best first, all visible from its scope and scoring > 0. */
  async recall(request: RecallRequest): Promise<MemoryHit[]> {
    const { query, scope, topK, minScore, ranking } = request;
    if (query.trim() === "" || topK === 0 || this.index.size === 0) return [];
    const scopes = visiblePaths(scope);
    const hasTerms = tokenize(query, "query", this.settings.stopWords).length > 0;
    let mode = ranking.search;
    let vector: number[] | undefined;
    if (mode !== "fulltext") {
      try {
        [vector] = await this.embedTexts([query]);
        if (this.index.dimensions !== vector!.length) {
          await this.exclusive(() => this.adoptDimensions(vector!.length, new Map()));
        }
      } catch (error) {
        if (mode === "vector") throw error;
        this.settings.onWarning({
          code: "embed_failed",
          message: `Recall fell back to full-text ranking because embedding the query failed: ${(error as Error).message}`,
          cause: error,
        });
        mode = "fulltext";
        vector = undefined;
      }
    }
    if (mode === "hybrid" && !hasTerms) mode = "vector";
    if (mode === "fulltext" && !hasTerms) return [];
    const askPath = scopePath(scope);
    const { relevance, minSimilarity, hybridWeights } = ranking;
    const size = this.index.size;
    const visible = this.index.countIn(scopes);
    if (visible === 0) return [];
    // Orama's `where` clause collects every visible entry on each search, which at 100,000 entries
    // costs far more than the ranking itself. So when every entry is visible there is no clause, and
    // a full-text search skips it unless few entries are visible: it asks for more hits instead, in
    // proportion, and drops the invisible ones below. Vector search only scores the entries the
    // clause lets through, and hybrid scales each side to its best hit among the visible entries,
    // so both keep the clause unless every entry is visible. Every hit is checked below either way;
    // when the check leaves fewer than topK, the search is repeated with a larger limit.
    const filter = visible < size && (mode !== "fulltext" || visible * FILTER_BELOW < size);
    const searched = filter ? scopes : undefined;
    const first = filter ? topK : Math.min(size, Math.ceil((topK * size) / visible));
    for (let limit = first; ; limit *= 4) {
      const index = this.index;
      let scored: ScoredId[];
      if (mode === "fulltext") scored = await index.fullText(query, searched, limit, relevance);
      else if (mode === "vector") scored = await index.vectorSearch(vector!, searched, limit, minSimilarity);
      else {
        scored = await index.hybrid(query, vector!, searched, limit, {
          relevance,
          similarity: minSimilarity,
          weights: hybridWeights,
        });
      }
      const hits: MemoryHit[] = [];
      for (const { id, score } of scored) {
        const doc = index.get(id);
        if (!doc || !(score > 0) || !Number.isFinite(score)) continue;
        if (doc.scope !== askPath && !scopeVisible(scopeFromPath(doc.scope), scope)) continue;
        hits.push({ entry: fromDoc(doc), score });
      }
      if (hits.length >= topK || scored.length < limit || limit >= index.size) {
        return hits.filter((h) => h.score >= minScore).slice(0, topK);
      }
    }
  }

  /** Saves now if anything changed. No-op for a store in memory. */
  flush(): Promise<void> {
    if (this.file === undefined) return Promise.resolve();
    clearTimeout(this.timer);
    this.timer = undefined;
    this.saving = this.saving.catch(() => {}).then(() => this.save());
    return this.saving;
  }

  /** Waits for pending mutations, saves, and frees the directory. */
  async close(): Promise<void> {
    try {
      await this.writes.catch(() => {});
      await this.flush();
    } finally {
      clearTimeout(this.timer);
      if (this.lock) await releaseLock(this.lock);
    }
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.writes.catch(() => {}).then(fn);
    this.writes = run;
    return run;
  }

  private markDirty(): void {
    if (this.file === undefined) return;
    this.dirty = true;
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush().catch((error: unknown) => {
        this.settings.onWarning({
          code: "flush_failed",
          message: (error as Error).message,
          file: this.file,
          cause: error,
        });
      });
    }, this.settings.flushDelayMs);
  }

  private async save(): Promise<void> {
    if (!this.dirty || this.file === undefined) return;
    this.dirty = false;
    const index = this.index;
    let text: string;
    try {
      text = encodeSnapshot(
        {
          savedAt: Date.now(),
          tokenizer: this.settings.tokenizer,
          dimensions: index.dimensions ?? null,
          embedModel: this.embedModel,
          count: index.size,
        },
        index.toCompact(),
      );
      await writeFileAtomic(this.file, text, true);
    } catch (error) {
      this.dirty = true;
      throw new MemoryError(
        "memory_unavailable",
        `Saving the memory snapshot ${this.file} failed (${(error as Error).message}); the previous snapshot is intact and the next save retries.`,
        { cause: error, details: { file: this.file } },
      );
    }
  }

  /** Loads `file`, or its backup when it is missing (an interrupted save) or corrupt and allowed. */
  private async loadFrom(file: string): Promise<void> {
    const backup = `${file}.bak`;
    let main: OramaIndex | undefined;
    try {
      main = await this.indexFromFile(file);
    } catch (error) {
      if (!(error instanceof SnapshotProblem)) throw error;
      let fallback: OramaIndex | undefined;
      let backupProblem: SnapshotProblem | undefined;
      if (error.reason !== "newer_version") {
        try {
          fallback = await this.indexFromFile(backup);
        } catch (problem) {
          if (!(problem instanceof SnapshotProblem)) throw problem;
          backupProblem = problem;
        }
      }
      if (fallback && this.settings.onCorrupt === "use-backup") {
        const aside = `${file}.corrupt-${new Date().toISOString().replace(/[:.]/g, "-")}`;
        await rename(file, aside);
        this.index = fallback;
        this.markDirty();
        this.settings.onWarning({
          code: "backup_loaded",
          message: `The memory snapshot ${file} is corrupt: ${error.message}. Loaded the previous snapshot ${backup} instead (${fallback.size} entries); the corrupt file was kept as ${aside}.`,
          file,
          cause: error,
        });
        return;
      }
      const backupNote =
        error.reason === "newer_version"
          ? ""
          : fallback
            ? ` The previous snapshot ${backup} is intact (${fallback.size} entries): open with the bm25Memory option onCorrupt: "use-backup" to load it, or move it over ${file}.`
            : backupProblem
              ? ` Its backup ${backup} is not usable either: ${backupProblem.message}.`
              : ` There is no backup ${backup}.`;
      throw new MemoryError(
        "memory_corrupt",
        `The memory snapshot ${file} cannot be loaded: ${error.message}.${backupNote}`,
        {
          cause: error,
          details: {
            file,
            reason: error.reason,
            backup: fallback ? { file: backup, entries: fallback.size } : undefined,
          },
        },
      );
    }
    if (main) {
      this.index = main;
      return;
    }
    let fromBackup: OramaIndex | undefined;
    try {
      fromBackup = await this.indexFromFile(backup);
    } catch (problem) {
      if (!(problem instanceof SnapshotProblem)) throw problem;
      throw new MemoryError(
        "memory_corrupt",
        `The memory snapshot ${file} is missing and its backup ${backup} cannot be loaded: ${problem.message}. Move the backup away to start an empty store.`,
        { cause: problem, details: { file: backup, reason: problem.reason } },
      );
    }
    if (fromBackup) {
      this.index = fromBackup;
      this.markDirty();
      this.settings.onWarning({
        code: "backup_loaded",
        message: `The memory snapshot ${file} is missing (a save was interrupted); loaded the previous snapshot ${backup} (${fromBackup.size} entries).`,
        file,
      });
    }
  }

  /** The index stored in `file`; `undefined` when there is no such file. @throws {SnapshotProblem} */
  private async indexFromFile(file: string): Promise<OramaIndex | undefined> {
    const snapshot = await readSnapshot(file);
    return snapshot === undefined ? undefined : this.indexFromSnapshot(snapshot, file);
  }

  private indexFromSnapshot(snapshot: Snapshot, file: string): OramaIndex {
    const { header } = snapshot;
    const saved = header.version === 1 ? savedV1(snapshot.body) : savedCompact(snapshot.body);
    const { entries } = saved;
    if (entries.length !== header.count) {
      throw new SnapshotProblem(
        `it holds ${entries.length} entries but its header says ${header.count}`,
        "invalid_data",
      );
    }
    const dimensions = header.dimensions ?? undefined;
    const modelChanged =
      this.settings.embedModel !== undefined &&
      header.embedModel !== null &&
      header.embedModel !== this.settings.embedModel;
    this.embedModel = this.settings.embedModel ?? header.embedModel;
    if (header.tokenizer === this.settings.tokenizer && !modelChanged && saved.reusable) {
      const index = new OramaIndex(dimensions, this.settings.stopWords);
      try {
        saved.load(index);
      } catch (error) {
        throw new SnapshotProblem(
          `its index cannot be loaded (${(error as Error).message})`,
          "invalid_data",
          {
            cause: error,
          },
        );
      }
      if (index.size !== header.count) {
        throw new SnapshotProblem(
          `its index holds ${index.size} entries but its header says ${header.count}`,
          "invalid_data",
        );
      }
      // An older layout is rewritten in the current one at the next save.
      if (header.version < SNAPSHOT_VERSION) this.markDirty();
      return index;
    }
    const vectors = modelChanged ? new Map<string, number[]>() : saved.vectors(dimensions);
    const index = new OramaIndex(modelChanged ? undefined : dimensions, this.settings.stopWords);
    for (const doc of entries) index.put(doc, vectors.get(doc.id));
    this.markDirty();
    if (saved.reusable) {
      this.settings.onWarning({
        code: "reindexed",
        message: modelChanged
          ? `The memory snapshot ${file} has vectors of embedding model "${header.embedModel}", not "${this.settings.embedModel}"; its entries are embedded again.`
          : `The memory snapshot ${file} was indexed with tokenizer "${header.tokenizer}"; it was re-indexed with "${this.settings.tokenizer}".`,
        file,
      });
    }
    return index;
  }

  /** Embeds the entries that have no vector yet (stored while the store had no `embed`). */
  private async backfillVectors(): Promise<void> {
    const missing = this.index.all().filter((doc) => this.index.vector(doc.id) === undefined);
    if (missing.length === 0) return;
    const vectors = await this.embedTexts(missing.map((doc) => doc.text));
    const known = new Map(missing.map((doc, i) => [doc.id, vectors[i]!] as const));
    await this.adoptDimensions(vectors[0]!.length, known);
    for (const doc of missing)
      if (this.index.vector(doc.id) === undefined) this.index.put(doc, known.get(doc.id));
    this.markDirty();
  }

  /**
   * Makes the index hold vectors of `dimensions`: a new embedding model (or the first vectors)
   * rebuilds it, embedding every entry not in `known` again. Runs inside {@link exclusive}.
   */
  private async adoptDimensions(dimensions: number, known: Map<string, number[]>): Promise<void> {
    if (this.index.dimensions === dimensions) return;
    const docs = this.index.all();
    const todo = docs.filter((doc) => !known.has(doc.id));
    if (todo.length > 0) {
      const vectors = await this.embedTexts(todo.map((doc) => doc.text));
      todo.forEach((doc, i) => {
        known.set(doc.id, vectors[i]!);
      });
    }
    for (const [id, vector] of known) {
      if (vector.length !== dimensions) {
        throw embedError(
          `returned vectors of ${vector.length} and ${dimensions} numbers (entry ${id}); every vector must have one size`,
        );
      }
    }
    const index = new OramaIndex(dimensions, this.settings.stopWords);
    for (const doc of docs) index.put(doc, known.get(doc.id));
    if (this.index.dimensions !== undefined && docs.length > 0) {
      this.settings.onWarning({
        code: "reindexed",
        message: `The embedding size changed from ${this.index.dimensions} to ${dimensions}; all ${docs.length} entries were embedded again.`,
        file: this.file,
      });
    }
    this.index = index;
    this.markDirty();
  }

  private async embedTexts(texts: readonly string[]): Promise<number[][]> {
    const embed = this.settings.embed!;
    const out: number[][] = [];
    for (let start = 0; start < texts.length; start += this.settings.embedBatchSize) {
      const batch = texts.slice(start, start + this.settings.embedBatchSize);
      let vectors: unknown;
      try {
        vectors = await embed(batch);
      } catch (error) {
        throw new MemoryError(
          "memory_unavailable",
          `The embed function failed: ${(error as Error)?.message ?? String(error)}`,
          {
            cause: error,
          },
        );
      }
      if (!Array.isArray(vectors) || vectors.length !== batch.length) {
        throw embedError(
          `returned ${Array.isArray(vectors) ? `${vectors.length} vectors` : JSON.stringify(typeof vectors)} for ${batch.length} texts; it must return one vector per text`,
        );
      }
      for (const vector of vectors as unknown[]) {
        const numbers = ArrayBuffer.isView(vector) ? Array.from(vector as Float32Array) : vector;
        if (
          !Array.isArray(numbers) ||
          numbers.length === 0 ||
          !numbers.every((n) => typeof n === "number" && Number.isFinite(n))
        ) {
          throw embedError("returned a vector that is not a non-empty array of finite numbers");
        }
        if (out.length > 0 && numbers.length !== out[0]!.length) {
          throw embedError(
            `returned vectors of ${out[0]!.length} and ${numbers.length} numbers; every vector must have one size`,
          );
        }
        out.push(numbers as number[]);
      }
    }
    return out;
  }
}

function embedError(problem: string): OpenRathError {
  return new OpenRathError("invalid_argument", `The bm25Memory embed function ${problem}.`);
}

function checkDoc(doc: unknown): void {
  const d = doc as Record<string, unknown>;
  const problem =
    typeof doc !== "object" || doc === null
      ? "is not an object"
      : typeof d.id !== "string"
        ? 'has no string "id"'
        : typeof d.text !== "string"
          ? 'has no string "text"'
          : typeof d.scope !== "string" || !/^[^/]+(\/[^/]+){0,3}$/.test(d.scope)
            ? `has an invalid scope ${JSON.stringify(d.scope)}`
            : typeof d.createdAt !== "number"
              ? 'has no numeric "createdAt"'
              : d.metadata !== undefined &&
                  (typeof d.metadata !== "object" || d.metadata === null || Array.isArray(d.metadata))
                ? "has metadata that is not an object"
                : d.source !== undefined && typeof d.source !== "string"
                  ? "has a source that is not a string"
                  : undefined;
  if (problem) {
    throw new SnapshotProblem(`an entry ${problem} (${JSON.stringify(doc)?.slice(0, 200)})`, "invalid_data");
  }
}

/** The body of a snapshot, checked as far as it can be without loading it. */
interface SavedBody {
  /** The entries, each checked. */
  readonly entries: readonly StoredDoc[];
  /** Whether the saved index can be loaded as it is (else its entries are indexed again). */
  readonly reusable: boolean;
  /** Loads the saved index into a new `index`. @throws {Error} when it is inconsistent. */
  load(index: OramaIndex): void;
  /** The saved vectors of `dimensions` numbers by entry id. */
  vectors(dimensions: number | undefined): Map<string, number[]>;
}

/** The body of a version 1 snapshot: Orama's saved database. @throws {SnapshotProblem} */
function savedV1(raw: unknown): SavedBody {
  const body = raw as OramaSaved | null;
  const docs = body?.docs?.docs;
  if (typeof docs !== "object" || docs === null) {
    throw new SnapshotProblem("its body has no documents", "invalid_data");
  }
  const entries = Object.values(docs);
  entries.forEach(checkDoc);
  const ids = body!.internalDocumentIDStore?.internalIdToId;
  // Orama kept every id it ever saw; reusing such an index would keep them, indexing anew does not.
  const bloated = Array.isArray(ids) && ids.length > 2 * entries.length + 1024;
  return {
    entries: entries as StoredDoc[],
    reusable: !bloated,
    load: (index) => index.loadCompact(compactFromOrama(body!, index.dimensions)),
    vectors: (dimensions) => {
      const out = new Map<string, number[]>();
      const saved = body!.index?.vectorIndexes?.embedding?.vectors;
      if (dimensions === undefined || !Array.isArray(ids) || !Array.isArray(saved)) return out;
      for (const item of saved as unknown[]) {
        const [internalId, pair] = item as [number, [number, number[]]];
        const id = ids[internalId - 1];
        const vector = pair?.[1];
        if (typeof id === "string" && Array.isArray(vector) && vector.length === dimensions) {
          out.set(id, vector);
        }
      }
      return out;
    },
  };
}

/** The body of a version 2 snapshot: {@link CompactIndex}. @throws {SnapshotProblem} */
function savedCompact(raw: unknown): SavedBody {
  const body = raw as Partial<Record<keyof CompactIndex, unknown>> | null;
  if (typeof body !== "object" || body === null || !Array.isArray(body.docs)) {
    throw new SnapshotProblem("its body has no documents", "invalid_data");
  }
  const { docs, tokens, counts, postings, avgLength, vectors } = body;
  if (
    !Array.isArray(tokens) ||
    !Array.isArray(counts) ||
    typeof postings !== "string" ||
    (avgLength !== null && typeof avgLength !== "number") ||
    (vectors !== undefined && !Array.isArray(vectors))
  ) {
    throw new SnapshotProblem("its body has no valid token index", "invalid_data");
  }
  docs.forEach(checkDoc);
  const compact = body as CompactIndex;
  return {
    entries: compact.docs,
    reusable: true,
    load: (index) => index.loadCompact(compact),
    vectors: (dimensions) => {
      const out = new Map<string, number[]>();
      if (dimensions === undefined || compact.vectors === undefined) return out;
      compact.docs.forEach((doc, i) => {
        const vector = compact.vectors![i];
        if (Array.isArray(vector) && vector.length === dimensions) out.set(doc.id, [...vector]);
      });
      return out;
    },
  };
}

function toDoc(entry: MemoryEntry): StoredDoc {
  return {
    id: entry.id,
    text: entry.text,
    scope: scopePath(entry.scope),
    createdAt: entry.createdAt,
    ...(entry.metadata === undefined
      ? {}
      : { metadata: structuredClone(entry.metadata) as Record<string, unknown> }),
    ...(entry.source === undefined ? {} : { source: entry.source }),
  };
}

function fromDoc(doc: StoredDoc): MemoryEntry {
  return {
    id: doc.id,
    text: doc.text,
    scope: scopeFromPath(doc.scope),
    createdAt: doc.createdAt,
    ...(doc.metadata === undefined ? {} : { metadata: structuredClone(doc.metadata) as JsonObject }),
    ...(doc.source === undefined ? {} : { source: doc.source }),
  };
}

function copyEntry(entry: MemoryEntry): MemoryEntry {
  return fromDoc(toDoc(entry));
}
