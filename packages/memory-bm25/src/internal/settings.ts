import type { MemoryScope } from "@openrath/core";
import type * as z from "zod";
import { DEFAULT_STEM_LANGUAGES } from "./language.js";
import type { Bm25MemoryOptionsSchema } from "./schemas.js";
import { type AnalyzerSettings, normalizeText, TOKENIZER_VERSION } from "./tokenize.js";
import type { Relevance } from "./top-k.js";

/** The factory options as their schema gives them back: checked, defaults applied. */
export type Bm25Options = z.output<typeof Bm25MemoryOptionsSchema>;

/** Turns texts into vectors, one per text, all of one size. */
export type EmbedFunction = (texts: string[]) => Promise<number[][]>;

/** How recall ranks entries. */
export type SearchMode = "fulltext" | "vector" | "hybrid";

/** Something worth knowing that did not stop the store. */
export interface Warning {
  /**
   * `backup_loaded` (the main snapshot was missing or corrupt and `<file>.bak` was loaded),
   * `temp_files_removed` (a crashed writer's temporary files were deleted), `log_repaired` (the
   * change log ended in a write a crash interrupted, never acknowledged; it was cut off),
   * `reindexed` (the snapshot was written by another analyzer or embedding model and was
   * re-indexed), `compaction_failed` (writing a snapshot from the change log failed; the log keeps
   * every change and the next compaction retries), `embed_failed` (a hybrid recall fell back to
   * full-text ranking because `embed` failed).
   */
  readonly code:
    | "backup_loaded"
    | "temp_files_removed"
    | "log_repaired"
    | "reindexed"
    | "compaction_failed"
    | "embed_failed";
  readonly message: string;
  /** The snapshot file concerned, if any. */
  readonly file?: string;
  readonly cause?: unknown;
}

/** How query words also match other terms; per handle, as ranking is. */
export interface Matching {
  /** Weight of a word's stems (its other forms), relative to the word itself. */
  readonly stemWeight: number;
  /** Completions of a query word of at least 3 letters (`deploy` → `deployment`), weighted by length. */
  readonly prefix: boolean;
  /** Terms a typo away from a query word that matches nothing: 1 edit from 4 letters, 2 from 8. */
  readonly fuzzy: boolean;
}

/** What a store runs with: the checked options and what follows from them. */
export interface Settings {
  readonly embed: EmbedFunction | undefined;
  readonly embedModel: string | undefined;
  readonly embedBatchSize: number;
  readonly search: SearchMode;
  readonly relevance: Relevance;
  readonly minSimilarity: number;
  readonly hybridWeights: { readonly text: number; readonly vector: number };
  readonly stopWords: ReadonlySet<string>;
  readonly analyzer: AnalyzerSettings;
  readonly matching: Matching;
  /** {@link TOKENIZER_VERSION} plus the analyzer settings: snapshots made with another one are re-indexed. */
  readonly tokenizer: string;
  /** `fsync`: every batch is fsynced before it is acknowledged; `write`: written, not fsynced. */
  readonly durability: "fsync" | "write";
  /** The change log is compacted into the snapshot once it holds more than this many bytes (and more than 1/8 of the snapshot). */
  readonly compactLogBytes: number;
  readonly onCorrupt: "throw" | "use-backup";
  readonly onWarning: (warning: Warning) => void;
}

/** A checked spec, its scope normalized. */
export interface ParsedSpec {
  readonly path: string | undefined;
  readonly scope: MemoryScope;
}

function defaultWarning(warning: Warning): void {
  process.emitWarning(warning.message, { code: `OPENRATH_MEMORY_BM25_${warning.code.toUpperCase()}` });
}

/**
 * The settings of a store from its checked options: the defaults that depend on other options
 * (`search` follows `embed`), the analyzer, and the tokenizer signature saved with snapshots.
 */
export function settingsOf(options: Bm25Options): Settings {
  const stopWords = new Set(options.stopWords.map(normalizeText).filter((s) => s !== ""));
  const stemming =
    options.stemming === "auto"
      ? [...DEFAULT_STEM_LANGUAGES]
      : options.stemming === false
        ? []
        : [...new Set(options.stemming)];
  const { identifiers, lengthUnit } = options;
  const analyzer: AnalyzerSettings = { stemming: new Set(stemming), identifiers, lengthUnit, stopWords };
  const tokenizer = [
    TOKENIZER_VERSION,
    `stem:${stemming.length === 0 ? "none" : [...stemming].sort().join(",")}`,
    `ids:${identifiers ? 1 : 0}`,
    `length:${lengthUnit}`,
    ...(stopWords.size === 0 ? [] : [`stop:${[...stopWords].sort().join(",")}`]),
  ].join("+");
  return {
    embed: options.embed,
    embedModel: options.embedModel,
    embedBatchSize: options.embedBatchSize,
    search: options.search ?? (options.embed ? "hybrid" : "fulltext"),
    relevance: { k1: options.k1, b: options.b, d: options.d },
    minSimilarity: options.minSimilarity,
    hybridWeights: options.hybridWeights,
    stopWords,
    analyzer,
    matching: { stemWeight: 0.8, prefix: options.prefix, fuzzy: options.fuzzy },
    tokenizer,
    durability: options.durability,
    compactLogBytes: options.compactLogBytes,
    onCorrupt: options.onCorrupt,
    onWarning: options.onWarning ?? defaultWarning,
  };
}
