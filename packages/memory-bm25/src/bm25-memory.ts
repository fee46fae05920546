import {
  type MemoryBackendV1,
  MemoryError,
  type MemoryScope,
  type MemoryV1,
  type OpenOptions,
} from "@openrath/core";
import { Bm25MemoryHandle } from "./internal/bm25-memory-handle.js";
import { Bm25Store } from "./internal/bm25-store.js";
import { leaseStore } from "./internal/lease-store.js";
import {
  type EmbedFunction,
  parseSettings,
  parseSpec,
  type SearchMode,
  type Settings,
  type Warning,
} from "./internal/settings.js";

/**
 * Turns texts into vectors: one vector per text, in order, all of one size (the size of the first
 * vector a store sees becomes its dimension). Called with batches of at most `embedBatchSize` texts.
 */
export type Bm25EmbedFunction = EmbedFunction;

/**
 * How recall ranks entries:
 * - `fulltext` — BM25 over the entry texts;
 * - `vector` — cosine similarity of embeddings (needs `embed`);
 * - `hybrid` — both, each scaled to its best hit (so scores are in (0, 1]), weighted by
 *   `hybridWeights` and summed (needs `embed`).
 */
export type Bm25SearchMode = SearchMode;

/** A problem the store recovered from, reported through {@link Bm25MemoryOptions.onWarning}. */
export type Bm25MemoryWarning = Warning;

/** What `memory: "bm25"` (or `backend.open(spec)`) takes. Every field is optional; `undefined` means `{}`. */
export interface Bm25MemorySpec {
  /**
   * The directory that holds the store (created when missing): the snapshot `memory.json`, its
   * backup `memory.json.bak` and the lock `memory.lock`. Without it the store lives in memory only
   * and every open is a fresh, empty store. Every open of one directory in one process shares one
   * store; one directory is written by one process at a time.
   */
  readonly path?: string;
  /**
   * The default scope of this handle: where `remember` and `commit` store entries that name no
   * scope, and where `recall` asks when given none (default: the tenant level, `{ tenant: "default" }`).
   */
  readonly scope?: MemoryScope;
}

/** Options of {@link bm25Memory}. */
export interface Bm25MemoryOptions {
  /**
   * Embeds texts for vector and hybrid recall. Without it the store is full-text only and its
   * capabilities say `vectorSearch: false`. Entries stored without vectors are embedded when a
   * store is next opened with `embed`.
   */
  readonly embed?: Bm25EmbedFunction;
  /**
   * A name for the embedding model, saved with the vectors. When a store saved with another name is
   * opened, every entry is embedded again. (A change of vector size is detected without it.)
   */
  readonly embedModel?: string;
  /** Most texts per `embed` call (default 64). */
  readonly embedBatchSize?: number;
  /** Ranking (default `hybrid` with `embed`, `fulltext` without). `vector` and `hybrid` need `embed`. */
  readonly search?: Bm25SearchMode;
  /** BM25 term-frequency saturation k1 (default 1.2; Orama's `relevance.k`). */
  readonly k1?: number;
  /** BM25 document-length normalization b, from 0 (none) to 1 (full) (default 0.75). */
  readonly b?: number;
  /** Orama's BM25 frequency-normalization lower bound d (default 0.5; 0 gives classic BM25). */
  readonly d?: number;
  /** Least cosine similarity for a vector hit, in (0, 1] (default 0.3). */
  readonly minSimilarity?: number;
  /** Weights of the full-text and vector sides in hybrid ranking, both > 0 (default 0.5 and 0.5). */
  readonly hybridWeights?: { readonly text: number; readonly vector: number };
  /** Words never indexed nor searched (default none). Changing them re-indexes a saved store on open. */
  readonly stopWords?: readonly string[];
  /** How long after a change the snapshot is saved, in milliseconds (default 200). Close always saves. */
  readonly flushDelayMs?: number;
  /**
   * What opening a store whose `memory.json` is corrupt does: `throw` (default) a `memory_corrupt`
   * error and leave both files alone, or `use-backup`: load `memory.json.bak`, keep the corrupt
   * file as `memory.json.corrupt-<time>` and report a `backup_loaded` warning.
   */
  readonly onCorrupt?: "throw" | "use-backup";
  /** Receives problems the store recovered from (default: `process.emitWarning`). */
  readonly onWarning?: (warning: Bm25MemoryWarning) => void;
}

/** An open bm25 memory store: {@link MemoryV1} plus an explicit `flush`. */
export interface Bm25Memory extends MemoryV1 {
  /** The store's canonical directory, `undefined` for a store in memory. */
  readonly directory: string | undefined;
  /** Saves pending changes now instead of after `flushDelayMs` (no-op in memory). */
  flush(): Promise<void>;
}

/**
 * The `bm25` memory backend: entries in an [Orama](https://orama.com) index, recalled by BM25 with
 * Unicode-aware tokens (any script; CJK through word segmentation plus character bigrams; accents
 * folded), optionally by embeddings (vector or hybrid). With `spec.path` the store is saved to
 * `<path>/memory.json` atomically, with a backup of the previous snapshot, shortly after each change
 * and on close; without a path it lives in memory.
 *
 * Capabilities: `vectorSearch` when `embed` is given; `persistence: true` (for stores opened with a
 * `path`); `sharedWriters: true` (handles on one directory within one process share one store, so
 * each sees the others' writes at once; a second process is refused with `memory_unavailable`).
 *
 * @example
 * ```ts
 * import { bm25Memory } from "@openrath/memory-bm25";
 *
 * const backend = bm25Memory({ k1: 1.5 });
 * const memory = await backend.open({ path: "./.openrath/memory", scope: { tenant: "acme", user: "ada" } });
 * await memory.remember({ text: "Ada prefers answers in French." });
 * const hits = await memory.recall("which language does ada prefer");
 * await memory.close();
 * ```
 *
 * @throws {OpenRathError} `invalid_argument` for a bad option.
 */
export function bm25Memory(
  options: Bm25MemoryOptions = {},
): MemoryBackendV1<Bm25MemorySpec | undefined, Bm25Memory> {
  const settings: Settings = parseSettings(options);
  return {
    kind: "memory",
    key: "bm25",
    specVersion: "v1",
    capabilities: { vectorSearch: settings.embed !== undefined, persistence: true, sharedWriters: true },
    parseSpec: (spec: unknown): Bm25MemorySpec => {
      const parsed = parseSpec(spec);
      return { ...(parsed.path === undefined ? {} : { path: parsed.path }), scope: parsed.scope };
    },
    async open(rawSpec: Bm25MemorySpec | undefined, openOptions: OpenOptions = {}): Promise<Bm25Memory> {
      const spec = parseSpec(rawSpec);
      const signal = openOptions.signal;
      if (signal?.aborted) throw aborted();
      if (spec.path === undefined) {
        const store = Bm25Store.inMemory(settings);
        return new Bm25MemoryHandle(store, settings, spec.scope, undefined, () => store.close());
      }
      const lease = await leaseStore(spec.path, settings);
      if (signal?.aborted) {
        await lease.release();
        throw aborted();
      }
      return new Bm25MemoryHandle(lease.store, settings, spec.scope, lease.directory, lease.release);
    },
  };
}

function aborted(): MemoryError {
  return new MemoryError(
    "memory_unavailable",
    "Opening the bm25 memory store was aborted by the caller's AbortSignal.",
  );
}

declare module "@openrath/core" {
  interface MemoryBackends {
    /** Local BM25 (+ optional vector) memory on Orama (`@openrath/memory-bm25`). */
    bm25: Bm25MemorySpec | undefined;
  }
}
