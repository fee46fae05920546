import { type MemoryScope, OpenRathError } from "@openrath/core";
import { normalizeScope } from "@openrath/core/backend";
import { DEFAULT_STEM_LANGUAGES, STEM_LANGUAGES, type StemLanguage } from "./language.js";
import { type AnalyzerSettings, normalizeText, TOKENIZER_VERSION } from "./tokenize.js";
import type { Relevance } from "./top-k.js";

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

/** The parsed factory options. */
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

/** The parsed spec. */
export interface ParsedSpec {
  readonly path: string | undefined;
  readonly scope: MemoryScope;
}

function invalid(message: string, details: Record<string, unknown>): OpenRathError {
  return new OpenRathError("invalid_argument", message, { details });
}

function number(
  options: Record<string, unknown>,
  name: string,
  fallback: number,
  valid: (v: number) => boolean,
  expected: string,
): number {
  const value = options[name];
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || !valid(value)) {
    throw invalid(`bm25Memory option "${name}" must be ${expected}, got ${JSON.stringify(value)}.`, {
      option: name,
      value,
    });
  }
  return value;
}

function defaultWarning(warning: Warning): void {
  process.emitWarning(warning.message, { code: `OPENRATH_MEMORY_BM25_${warning.code.toUpperCase()}` });
}

const KNOWN_OPTIONS = new Set([
  "embed",
  "embedModel",
  "embedBatchSize",
  "search",
  "k1",
  "b",
  "d",
  "minSimilarity",
  "hybridWeights",
  "stopWords",
  "stemming",
  "identifiers",
  "lengthUnit",
  "prefix",
  "fuzzy",
  "durability",
  "compactLogBytes",
  "onCorrupt",
  "onWarning",
]);

/**
 * Checks the factory options and fills in defaults.
 *
 * @throws {OpenRathError} `invalid_argument` naming the bad option.
 */
export function parseSettings(raw: unknown): Settings {
  if (raw === undefined) raw = {};
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw invalid(`bm25Memory options must be an object, got ${JSON.stringify(raw)}.`, { value: raw });
  }
  const options = raw as Record<string, unknown>;
  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(key)) {
      throw invalid(`Unknown bm25Memory option "${key}". Valid options: ${[...KNOWN_OPTIONS].join(", ")}.`, {
        option: key,
      });
    }
  }
  const embed = options.embed;
  if (embed !== undefined && typeof embed !== "function") {
    throw invalid(`bm25Memory option "embed" must be a function (texts: string[]) => Promise<number[][]>.`, {
      option: "embed",
    });
  }
  const embedModel = options.embedModel;
  if (embedModel !== undefined && (typeof embedModel !== "string" || embedModel === "")) {
    throw invalid(
      `bm25Memory option "embedModel" must be a non-empty string, got ${JSON.stringify(embedModel)}.`,
      {
        option: "embedModel",
        value: embedModel,
      },
    );
  }
  const search = options.search ?? (embed ? "hybrid" : "fulltext");
  if (search !== "fulltext" && search !== "vector" && search !== "hybrid") {
    throw invalid(
      `bm25Memory option "search" must be "fulltext", "vector" or "hybrid", got ${JSON.stringify(search)}.`,
      {
        option: "search",
        value: search,
      },
    );
  }
  if (search !== "fulltext" && !embed) {
    throw invalid(
      `bm25Memory option "search" is "${search}", which ranks by embeddings, but no "embed" function was given. Pass embed, or use search: "fulltext".`,
      { option: "search", value: search },
    );
  }
  const weights = options.hybridWeights ?? { text: 0.5, vector: 0.5 };
  const w = weights as Record<string, unknown>;
  if (
    typeof weights !== "object" ||
    weights === null ||
    typeof w.text !== "number" ||
    typeof w.vector !== "number" ||
    !(w.text > 0 && w.text < Number.POSITIVE_INFINITY) ||
    !(w.vector > 0 && w.vector < Number.POSITIVE_INFINITY)
  ) {
    throw invalid(
      `bm25Memory option "hybridWeights" must be { text, vector } with both numbers > 0 (use search: "fulltext" or "vector" for one side only), got ${JSON.stringify(weights)}.`,
      { option: "hybridWeights", value: weights },
    );
  }
  const stopWordsRaw = options.stopWords ?? [];
  if (!Array.isArray(stopWordsRaw) || stopWordsRaw.some((s) => typeof s !== "string")) {
    throw invalid(`bm25Memory option "stopWords" must be an array of strings.`, { option: "stopWords" });
  }
  const stopWords = new Set((stopWordsRaw as string[]).map(normalizeText).filter((s) => s !== ""));
  const onCorrupt = options.onCorrupt ?? "throw";
  if (onCorrupt !== "throw" && onCorrupt !== "use-backup") {
    throw invalid(
      `bm25Memory option "onCorrupt" must be "throw" or "use-backup", got ${JSON.stringify(onCorrupt)}.`,
      {
        option: "onCorrupt",
        value: onCorrupt,
      },
    );
  }
  const onWarning = options.onWarning ?? defaultWarning;
  if (typeof onWarning !== "function") {
    throw invalid(`bm25Memory option "onWarning" must be a function.`, { option: "onWarning" });
  }
  const stemming = parseStemming(options.stemming);
  const identifiers = flag(options, "identifiers", true);
  const lengthUnit = options.lengthUnit ?? "words";
  if (lengthUnit !== "words" && lengthUnit !== "terms") {
    throw invalid(
      `bm25Memory option "lengthUnit" must be "words" or "terms", got ${JSON.stringify(lengthUnit)}.`,
      {
        option: "lengthUnit",
        value: lengthUnit,
      },
    );
  }
  const durability = options.durability ?? "fsync";
  if (durability !== "fsync" && durability !== "write") {
    throw invalid(
      `bm25Memory option "durability" must be "fsync" or "write", got ${JSON.stringify(durability)}.`,
      {
        option: "durability",
        value: durability,
      },
    );
  }
  const analyzer: AnalyzerSettings = { stemming: new Set(stemming), identifiers, lengthUnit, stopWords };
  const tokenizer = [
    TOKENIZER_VERSION,
    `stem:${stemming.length === 0 ? "none" : [...stemming].sort().join(",")}`,
    `ids:${identifiers ? 1 : 0}`,
    `length:${lengthUnit}`,
    ...(stopWords.size === 0 ? [] : [`stop:${[...stopWords].sort().join(",")}`]),
  ].join("+");
  return {
    embed: embed as EmbedFunction | undefined,
    embedModel: embedModel as string | undefined,
    embedBatchSize: number(
      options,
      "embedBatchSize",
      64,
      (v) => Number.isInteger(v) && v >= 1,
      "an integer >= 1",
    ),
    search,
    relevance: {
      k1: number(options, "k1", 1.2, (v) => v >= 0, "a number >= 0"),
      b: number(options, "b", 0.75, (v) => v >= 0 && v <= 1, "a number from 0 to 1"),
      d: number(options, "d", 0.5, (v) => v >= 0, "a number >= 0"),
    },
    minSimilarity: number(options, "minSimilarity", 0.3, (v) => v > 0 && v <= 1, "a number > 0 and <= 1"),
    hybridWeights: { text: w.text as number, vector: w.vector as number },
    stopWords,
    analyzer,
    matching: {
      stemWeight: 0.8,
      prefix: flag(options, "prefix", true),
      fuzzy: flag(options, "fuzzy", true),
    },
    tokenizer,
    durability,
    compactLogBytes: number(
      options,
      "compactLogBytes",
      4 * 1024 * 1024,
      (v) => Number.isInteger(v) && v >= 0,
      "a whole number of bytes >= 0",
    ),
    onCorrupt,
    onWarning: onWarning as (warning: Warning) => void,
  };
}

function flag(options: Record<string, unknown>, name: string, fallback: boolean): boolean {
  const value = options[name];
  if (value === undefined) return fallback;
  if (typeof value !== "boolean") {
    throw invalid(`bm25Memory option "${name}" must be true or false, got ${JSON.stringify(value)}.`, {
      option: name,
      value,
    });
  }
  return value;
}

function parseStemming(value: unknown): StemLanguage[] {
  if (value === undefined || value === "auto") return [...DEFAULT_STEM_LANGUAGES];
  if (value === false) return [];
  if (Array.isArray(value) && value.every((v) => (STEM_LANGUAGES as readonly unknown[]).includes(v))) {
    return [...new Set(value as StemLanguage[])];
  }
  throw invalid(
    `bm25Memory option "stemming" must be "auto", false, or a list of languages (${STEM_LANGUAGES.join(", ")}), got ${JSON.stringify(value)}.`,
    { option: "stemming", value },
  );
}

/**
 * Checks a spec (`undefined` means `{}`).
 *
 * @throws {OpenRathError} `invalid_spec` naming the bad field; `invalid_scope` from the scope check.
 */
export function parseSpec(raw: unknown): ParsedSpec {
  if (raw === undefined || raw === null) return { path: undefined, scope: normalizeScope({}) };
  if (typeof raw !== "object" || Array.isArray(raw)) {
    throw new OpenRathError(
      "invalid_spec",
      `A bm25 memory spec must be an object such as { path: "./memory" }, got ${JSON.stringify(raw)}.`,
      {
        details: { spec: raw },
      },
    );
  }
  const spec = raw as Record<string, unknown>;
  for (const key of Object.keys(spec)) {
    if (key !== "path" && key !== "scope") {
      throw new OpenRathError(
        "invalid_spec",
        `Unknown field "${key}" in a bm25 memory spec. Valid fields: path, scope.`,
        {
          details: { field: key },
        },
      );
    }
  }
  if (spec.path !== undefined && (typeof spec.path !== "string" || spec.path === "")) {
    throw new OpenRathError(
      "invalid_spec",
      `bm25 memory spec field "path" must be a non-empty directory path, got ${JSON.stringify(spec.path)}.`,
      { details: { field: "path", value: spec.path } },
    );
  }
  if (
    spec.scope !== undefined &&
    (typeof spec.scope !== "object" || spec.scope === null || Array.isArray(spec.scope))
  ) {
    throw new OpenRathError(
      "invalid_spec",
      `bm25 memory spec field "scope" must be an object such as { tenant: "acme", user: "ada" }, got ${JSON.stringify(spec.scope)}.`,
      { details: { field: "scope", value: spec.scope } },
    );
  }
  return { path: spec.path as string | undefined, scope: normalizeScope((spec.scope ?? {}) as MemoryScope) };
}
