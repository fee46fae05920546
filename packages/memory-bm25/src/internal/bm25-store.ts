import { join } from "node:path";
import {
  type MemoryEntry,
  MemoryError,
  type MemoryHit,
  type MemoryScope,
  OpenRathError,
} from "@openrath/core";
import { scopeContains, scopePath } from "@openrath/core/backend";
import { type LogChange, LogWriter, removeLogsBefore } from "./change-log.js";
import { acquireLock, releaseLock } from "./lock-file.js";
import { queryPlan } from "./query-plan.js";
import { scopeFromPath, visiblePaths } from "./scope-paths.js";
import type { Settings } from "./settings.js";
import { removeLeftoverTempFiles, writeFileAtomic } from "./snapshot-file.js";
import { loadStore } from "./store-load.js";
import { StoreState } from "./store-state.js";
import { docKey, type StoredDoc } from "./text-index.js";
import { VectorIndex } from "./vector-index.js";

/** The snapshot file inside a store directory. */
export const SNAPSHOT_FILE = "memory.json";
/** The lock file inside a store directory. */
export const LOCK_FILE = "memory.lock";

/** What a recall asks for, parsed. */
export interface RecallRequest {
  readonly query: string;
  readonly scope: MemoryScope;
  readonly topK: number;
  readonly minScore: number;
  /** The ranking settings of the asking handle (handles of one store may rank differently). */
  readonly ranking: Pick<Settings, "search" | "relevance" | "minSimilarity" | "hybridWeights" | "matching">;
}

/**
 * One memory store: its state in memory and, for a store with a directory, the lock, the snapshot
 * and the change log. Mutations run one at a time: each is prepared (checked, embedded), logged
 * (and fsynced, with durability `fsync`), and only then applied, so a mutation that fails changes
 * nothing and one that succeeded survives a crash. The log is compacted into the snapshot once it
 * outgrows both `compactLogBytes` and an eighth of the snapshot, so each change costs disk writes
 * in proportion to its own size (amortized), never a rewrite of the whole store.
 */
export class Bm25Store {
  readonly settings: Settings;
  readonly directory: string | undefined;
  private readonly file: string | undefined;
  private state: StoreState;
  private embedModel: string | null;
  private log: LogWriter | undefined;
  private snapshotLog: number | undefined;
  private snapshotBytes = 0;
  private dirty = false;
  private writes: Promise<unknown> = Promise.resolve();
  private compacting: Promise<void> | undefined;

  private constructor(settings: Settings, directory: string | undefined) {
    this.settings = settings;
    this.directory = directory;
    this.file = directory === undefined ? undefined : join(directory, SNAPSHOT_FILE);
    this.state = new StoreState(settings.analyzer);
    this.embedModel = settings.embedModel ?? null;
  }

  /** A store kept in memory only. */
  static inMemory(settings: Settings): Bm25Store {
    return new Bm25Store(settings, undefined);
  }

  /**
   * Opens the store of directory `dir` (which must exist): takes its lock, loads its snapshot (or
   * the backup, see the `onCorrupt` option) and change log, and embeds entries that have no vector.
   *
   * @throws {MemoryError} `memory_corrupt` for a snapshot or log that cannot be used,
   *   `memory_unsupported_version` for one of a newer version, `memory_unavailable` when another
   *   process holds the directory.
   */
  static async open(settings: Settings, dir: string): Promise<Bm25Store> {
    const lock = join(dir, LOCK_FILE);
    await acquireLock(lock);
    const store = new Bm25Store(settings, dir);
    try {
      const file = store.file!;
      const leftovers = await removeLeftoverTempFiles(file);
      if (leftovers.length > 0) {
        settings.onWarning({
          code: "temp_files_removed",
          message: `Removed ${leftovers.length} temporary file(s) left by an interrupted save next to ${file} (${leftovers.join(", ")}); the snapshot itself is intact.`,
          file,
        });
      }
      const loaded = await loadStore(settings, dir, file);
      store.state = loaded.state;
      store.embedModel = loaded.embedModel;
      store.snapshotLog = loaded.snapshotLog;
      store.snapshotBytes = loaded.snapshotBytes;
      store.dirty = loaded.needsCompaction;
      store.log = await LogWriter.open(dir, loaded.generation, loaded.validBytes);
      if (settings.embed) await store.exclusive(() => store.backfillVectors());
      if (store.dirty) await store.compact();
      return store;
    } catch (error) {
      await store.log?.close();
      await releaseLock(lock);
      throw error;
    }
  }

  /** Number of entries. */
  get size(): number {
    return this.state.size;
  }

  /**
   * Stores `entries` (checked), replacing entries with the same scope and id (or, with `onlyNew`,
   * skipping them). Returns what was stored. Nothing changes unless every entry is stored.
   */
  put(entries: readonly MemoryEntry[], onlyNew: boolean): Promise<MemoryEntry[]> {
    return this.exclusive(async () => {
      const docs = entries
        .map(toDoc)
        .filter((doc) => !(onlyNew && this.state.index.hasKey(docKey(doc.scope, doc.id))));
      if (docs.length === 0) return [];
      let vectors: number[][] | undefined;
      if (this.settings.embed) {
        vectors = await this.embedTexts(docs.map((doc) => doc.text));
        await this.adoptDimensions(vectors[0]!.length, new Map());
      }
      await this.commitChanges(
        docs.map((doc, i) => ({ op: "put", doc, ...(vectors ? { vector: vectors[i]! } : {}) })),
      );
      return docs.map(fromDoc);
    });
  }

  /** Removes the entries with `ids` at exactly `scope`; returns how many existed. */
  deleteIds(ids: readonly string[], scope: MemoryScope): Promise<number> {
    return this.exclusive(async () => {
      const path = scopePath(scope);
      const changes: LogChange[] = ids
        .filter((id) => this.state.index.hasKey(docKey(path, id)))
        .map((id) => ({ op: "delete", scope: path, id }));
      if (changes.length > 0) await this.commitChanges(changes);
      return changes.length;
    });
  }

  /** Removes every entry at or below `scope`; returns how many. */
  deleteScope(scope: MemoryScope): Promise<number> {
    return this.exclusive(async () => {
      const changes: LogChange[] = [];
      for (const { scope: path, id } of this.state.index.heads()) {
        if (scopeContains(scope, scopeFromPath(path))) changes.push({ op: "delete", scope: path, id });
      }
      if (changes.length > 0) await this.commitChanges(changes);
      return changes.length;
    });
  }

  /** The entries relevant to the request, best first, all visible from its scope and scoring > 0. */
  async recall(request: RecallRequest): Promise<MemoryHit[]> {
    const { query, scope, topK, minScore, ranking } = request;
    if (query.trim() === "" || topK === 0 || this.state.size === 0) return [];
    const visible = visiblePaths(scope);
    const groups = queryPlan(query, this.state.index, this.settings.analyzer, ranking.matching);
    let mode = ranking.search;
    let vector: number[] | undefined;
    if (mode !== "fulltext") {
      try {
        [vector] = await this.embedTexts([query]);
        if (this.state.vectors?.dimensions !== vector!.length) {
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
    if (mode === "hybrid" && groups.length === 0) mode = "vector";
    if (mode === "fulltext" && groups.length === 0) return [];
    const { index, vectors } = this.state;
    const keep = (doc: StoredDoc | undefined, score: number, out: MemoryHit[]) => {
      // Every hit is checked against the asking scope, whichever path found it.
      if (doc === undefined || !(score > 0) || !Number.isFinite(score) || !visible.includes(doc.scope))
        return;
      if (score >= minScore) out.push({ entry: fromDoc(doc), score });
    };
    const hits: MemoryHit[] = [];
    if (mode === "fulltext") {
      const floor = Number.isFinite(minScore) ? minScore : Number.NEGATIVE_INFINITY;
      for (const { doc, score } of index.search(groups, visible, topK, floor, ranking.relevance)) {
        keep(index.doc(doc), score, hits);
      }
      return hits;
    }
    const all = index.countIn(visible) === index.size ? undefined : visible;
    if (mode === "vector") {
      for (const { key, score } of await vectors!.search(vector!, all, topK, ranking.minSimilarity)) {
        keep(index.get(key), score, hits);
      }
      return hits;
    }
    // Hybrid: each side's best candidates, each scaled to its best, weighted and summed.
    const depth = Math.max(topK * 4, 40);
    const text = index.search(groups, visible, depth, Number.NEGATIVE_INFINITY, ranking.relevance);
    const near = await vectors!.search(vector!, all, depth, ranking.minSimilarity);
    const combined = new Map<string, { doc: StoredDoc; score: number }>();
    const textBest = text[0]?.score ?? 1;
    const vectorBest = near[0]?.score ?? 1;
    for (const { doc: n, score } of text) {
      const doc = index.doc(n);
      if (doc)
        combined.set(docKey(doc.scope, doc.id), {
          doc,
          score: (ranking.hybridWeights.text * score) / textBest,
        });
    }
    for (const { key, score } of near) {
      const doc = index.get(key);
      if (!doc) continue;
      const add = (ranking.hybridWeights.vector * score) / vectorBest;
      const prior = combined.get(key);
      combined.set(key, { doc, score: (prior?.score ?? 0) + add });
    }
    const total = ranking.hybridWeights.text + ranking.hybridWeights.vector;
    const ranked = [...combined.values()].sort((x, y) => y.score - x.score);
    for (const { doc, score } of ranked) {
      if (hits.length >= topK) break;
      keep(doc, score / total, hits);
    }
    return hits;
  }

  /** Compacts the change log into the snapshot now. No-op for a store in memory. */
  async flush(): Promise<void> {
    if (this.file === undefined) return;
    await this.writes.catch(() => {});
    await this.compacting?.catch(() => {});
    await this.compact();
  }

  /** Waits for pending mutations, compacts the log into the snapshot, and frees the directory. */
  async close(): Promise<void> {
    try {
      await this.writes.catch(() => {});
      await this.compacting?.catch(() => {});
      if (this.file !== undefined) {
        await this.compact().catch((error: unknown) => this.compactionFailed(error));
      }
    } finally {
      await this.log?.close();
      if (this.directory !== undefined) await releaseLock(join(this.directory, LOCK_FILE));
    }
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.writes.catch(() => {}).then(fn);
    this.writes = run;
    return run;
  }

  /** Logs `changes` as one batch, then applies them; schedules a compaction when the log is large. */
  private async commitChanges(changes: readonly LogChange[]): Promise<void> {
    const log = this.log;
    // Everything that can fail (analysis) happens before the batch is logged.
    const apply = this.state.prepare(changes);
    if (log !== undefined) {
      try {
        await log.append(changes, this.settings.durability === "fsync");
      } catch (error) {
        throw new MemoryError(
          "memory_unavailable",
          `Writing to the change log ${log.file} failed (${(error as Error).message}); nothing was changed.`,
          { cause: error, details: { file: log.file } },
        );
      }
    }
    apply();
    if (log !== undefined && this.compacting === undefined) {
      const limit = Math.max(this.settings.compactLogBytes, this.snapshotBytes / 8);
      if (log.batchBytes > limit) {
        const compacting = this.compact()
          .catch((error: unknown) => this.compactionFailed(error))
          .finally(() => {
            if (this.compacting === compacting) this.compacting = undefined;
          });
        this.compacting = compacting;
      }
    }
  }

  private compactionFailed(error: unknown): void {
    this.settings.onWarning({
      code: "compaction_failed",
      message: `Compacting the change log into ${this.file} failed (${(error as Error).message}); every change is kept in the log and the next compaction retries.`,
      file: this.file,
      cause: error,
    });
  }

  /**
   * Writes a snapshot of the current state and starts the next log generation: the state is
   * captured and the generation switched between two mutations; the file is written after, while
   * new changes go to the new generation. Logs older than the backup's are then removed.
   */
  private async compact(): Promise<void> {
    const dir = this.directory;
    const file = this.file;
    if (dir === undefined || file === undefined) return;
    const captured = await this.exclusive(async () => {
      const log = this.log!;
      if (log.batchBytes === 0 && !this.dirty) return undefined;
      const generation = log.generation + 1;
      const snapshot = this.state.snapshot({
        savedAt: Date.now(),
        tokenizer: this.settings.tokenizer,
        embedModel: this.embedModel,
        log: generation,
      });
      this.log = await LogWriter.open(dir, generation);
      await log.close();
      this.dirty = false;
      return { snapshot, generation };
    });
    if (captured === undefined) return;
    try {
      await writeFileAtomic(file, captured.snapshot.chunks, true);
    } catch (error) {
      this.dirty = true;
      throw error;
    }
    const backupLog = this.snapshotLog;
    this.snapshotLog = captured.generation;
    this.snapshotBytes = captured.snapshot.bytes;
    await removeLogsBefore(dir, backupLog ?? captured.generation);
  }

  /** Embeds the entries that have no vector yet (stored while the store had no `embed`). */
  private async backfillVectors(): Promise<void> {
    const vectors = this.state.vectors;
    const missing = [...this.state.index.all()].filter(
      (doc) => vectors?.get(docKey(doc.scope, doc.id)) === undefined,
    );
    if (missing.length === 0) return;
    const embedded = await this.embedTexts(missing.map((doc) => doc.text));
    const known = new Map(missing.map((doc, i) => [docKey(doc.scope, doc.id), embedded[i]!] as const));
    await this.adoptDimensions(embedded[0]!.length, known);
    for (const doc of missing) {
      const key = docKey(doc.scope, doc.id);
      if (this.state.vectors!.get(key) === undefined)
        this.state.vectors!.put(key, doc.scope, known.get(key)!);
    }
    this.dirty = true;
  }

  /**
   * Makes the state hold vectors of `dimensions`: the first vectors, or a new embedding size,
   * rebuilds the vector index, embedding every entry not in `known` again. Runs inside
   * {@link exclusive}; the snapshot is rewritten at the next compaction.
   */
  private async adoptDimensions(dimensions: number, known: Map<string, number[]>): Promise<void> {
    const current = this.state.vectors;
    if (current?.dimensions === dimensions) return;
    const docs = [...this.state.index.all()];
    const todo = docs.filter((doc) => !known.has(docKey(doc.scope, doc.id)));
    if (todo.length > 0) {
      const vectors = await this.embedTexts(todo.map((doc) => doc.text));
      todo.forEach((doc, i) => {
        known.set(docKey(doc.scope, doc.id), vectors[i]!);
      });
    }
    for (const [key, vector] of known) {
      if (vector.length !== dimensions) {
        throw embedError(
          `returned vectors of ${vector.length} and ${dimensions} numbers (entry ${key.slice(key.indexOf("\u0000") + 1)}); every vector must have one size`,
        );
      }
    }
    const index = new VectorIndex(dimensions);
    for (const doc of docs) {
      const key = docKey(doc.scope, doc.id);
      index.put(key, doc.scope, known.get(key)!);
    }
    if (current !== undefined && docs.length > 0) {
      this.settings.onWarning({
        code: "reindexed",
        message: `The embedding size changed from ${current.dimensions} to ${dimensions}; all ${docs.length} entries were embedded again.`,
        file: this.file,
      });
    }
    this.state.vectors = index;
    this.dirty = true;
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
    ...(doc.metadata === undefined
      ? {}
      : { metadata: structuredClone(doc.metadata) as MemoryEntry["metadata"] }),
    ...(doc.source === undefined ? {} : { source: doc.source }),
  };
}
