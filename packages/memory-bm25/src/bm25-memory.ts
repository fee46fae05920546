import {
  type MemoryBackendV1,
  MemoryError,
  type MemoryScope,
  type MemoryV1,
  type OpenOptions,
} from "@openrath/core";
import { checkOptions, checkSpec, normalizeScope } from "@openrath/core/backend";
import { Bm25MemoryHandle } from "./internal/bm25-memory-handle.js";
import { Bm25Store } from "./internal/bm25-store.js";
import type { StemLanguage } from "./internal/language.js";
import { leaseStore } from "./internal/lease-store.js";
import { Bm25MemoryOptionsSchema, Bm25MemorySpecSchema } from "./internal/schemas.js";
import {
  type EmbedFunction,
  type ParsedSpec,
  type SearchMode,
  type Settings,
  settingsOf,
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

/** A language with a stemmer, for {@link Bm25MemoryOptions.stemming}. */
export type Bm25StemLanguage = StemLanguage;

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
  /** BM25 term-frequency saturation k1 (default 1.2). Lower: repeats matter less. */
  readonly k1?: number;
  /** BM25 document-length normalization b, from 0 (none) to 1 (full) (default 0.75). */
  readonly b?: number;
  /** BM25+ lower bound δ added to every matching term's score (default 0.5; 0 gives classic BM25). */
  readonly d?: number;
  /** Least cosine similarity for a vector hit, in (0, 1] (default 0.3). */
  readonly minSimilarity?: number;
  /** Weights of the full-text and vector sides in hybrid ranking, both > 0 (default 0.5 and 0.5). */
  readonly hybridWeights?: { readonly text: number; readonly vector: number };
  /** Words never indexed nor searched (default none). Changing them re-indexes a saved store on open. */
  readonly stopWords?: readonly string[];
  /**
   * Stemming, so that other forms of a word match (`batteries` finds `battery`, `réunions` finds
   * `réunion`, `встречи` finds `встреча`): `"auto"` (default) stems with English, French, German,
   * Spanish, Italian, Portuguese, Dutch, Russian and Greek Snowball stemmers (`@orama/stemmers`);
   * a list picks the languages; `false` turns stemming off. An entry is stemmed in the language
   * its function words point to (every enabled language of its script when none stands out); a
   * query word in every enabled language of its script. Changing it re-indexes a saved store.
   */
  readonly stemming?: "auto" | false | readonly Bm25StemLanguage[];
  /**
   * Also index identifiers in parts split at case changes and letter–digit boundaries
   * (`getUserName` → get, user, name; `utf8` → utf, 8) besides the parts between `_`, `.`, `-`
   * and `'`, which are always indexed (default true). Changing it re-indexes a saved store.
   */
  readonly identifiers?: boolean;
  /**
   * How an entry's length is counted for BM25's length normalization: `"words"` (default: a word
   * per word, a CJK word as `Intl.Segmenter` cuts it, so the extra CJK unigrams and bigrams, stems
   * and identifier parts do not make an entry look long) or `"terms"` (every indexed term, which
   * pushes CJK entries down). Changing it re-indexes a saved store.
   */
  readonly lengthUnit?: "words" | "terms";
  /**
   * Query words of at least 3 letters also match terms they are a prefix of (`deploy` finds
   * `deployment`), the shortest 8, at a weight of 0.5 × word length / term length (default true).
   */
  readonly prefix?: boolean;
  /**
   * A query word that matches nothing as it is or by its stems also matches terms a typo away:
   * 1 edit (insertion, deletion, substitution, swap of neighbours) from 4 letters, 2 from 8; the 4
   * closest, at weight 0.5 (1 edit) or 0.3 (2 edits) (default true).
   */
  readonly fuzzy?: boolean;
  /**
   * What an acknowledged `remember`, `commit` or `forget` survives. `"fsync"` (default): its
   * change-log batch is fsynced before the call resolves, so it survives a crash of the process and
   * of the machine (one fsync per call). `"write"`: the batch is written to the log but not
   * fsynced, so it survives a crash of the process (kill -9) but may be lost if the machine loses
   * power before the operating system writes it out; much faster for many small calls.
   */
  readonly durability?: "fsync" | "write";
  /**
   * The change log is compacted into a new snapshot once it holds more than this many bytes and
   * more than an eighth of the snapshot's size (default 4 MiB), so a change costs disk writes in
   * proportion to its size, amortized. `close()` and `flush()` always compact.
   */
  readonly compactLogBytes?: number;
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
  /** Compacts the change log into a new snapshot now (no-op in memory). Acknowledged changes are durable without it. */
  flush(): Promise<void>;
}

/**
 * The `bm25` memory backend: entries in a full-text index of its own, recalled by BM25+ with
 * Unicode-aware terms (any script; CJK through word segmentation plus character n-grams; accents
 * folded; stems, identifier parts, prefixes and typos), top-k with MaxScore pruning, optionally by
 * embeddings (vector or hybrid, the vectors in [Orama](https://orama.com)). With `spec.path` every
 * acknowledged change is in an append-only change log (fsynced, by default) before the call
 * resolves, and the log is compacted into the snapshot `<path>/memory.json`, written atomically
 * with a backup of the previous one; without a path the store lives in memory.
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
 * @throws {OpenRathError} `invalid_argument` for a bad option; the descriptor's `parseSpec` and
 *   `open` refuse a bad spec with `invalid_spec` (a bad scope level with `invalid_scope`).
 */
export function bm25Memory(
  options: Bm25MemoryOptions = {},
): MemoryBackendV1<Bm25MemorySpec | undefined, Bm25Memory> {
  const settings: Settings = settingsOf(
    checkOptions(Bm25MemoryOptionsSchema, options, { backend: "bm25Memory" }),
  );
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

/**
 * A checked spec (`undefined` and `null` are `{}`), its scope normalized.
 *
 * @throws {OpenRathError} `invalid_spec`; {@link MemoryError} `invalid_scope` for a bad scope level.
 */
function parseSpec(raw: unknown): ParsedSpec {
  const spec = checkSpec(Bm25MemorySpecSchema, raw ?? {}, { kind: "memory", key: "bm25" });
  return { path: spec.path, scope: normalizeScope(spec.scope ?? {}) };
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
    /** The same backend under the key `local`, registered by `@openrath/memory-bm25/register`. */
    local: Bm25MemorySpec | undefined;
  }
}
