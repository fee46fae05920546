import { type MemoryScope, OpenRathError } from "@openrath/core";
import { normalizeScope } from "@openrath/core/backend";
import type { Relevance } from "./orama-index.js";
import { normalizeText, TOKENIZER_VERSION } from "./tokenize.js";

/** Turns texts into vectors, one per text, all of one size. */
export type EmbedFunction = (texts: string[]) => Promise<number[][]>;

/** How recall ranks entries. */
export type SearchMode = "fulltext" | "vector" | "hybrid";

/** Something worth knowing that did not stop the store. */
export interface Warning {
  /**
   * `backup_loaded` (the main snapshot was missing or corrupt and `<file>.bak` was loaded),
   * `temp_files_removed` (a crashed writer's temporary files were deleted), `reindexed` (the
   * snapshot was written by another tokenizer or embedding model and was re-indexed),
   * `flush_failed` (a background save failed; the next save retries), `embed_failed` (a hybrid
   * recall fell back to full-text ranking because `embed` failed).
   */
  readonly code: "backup_loaded" | "temp_files_removed" | "reindexed" | "flush_failed" | "embed_failed";
  readonly message: string;
  /** The snapshot file concerned, if any. */
  readonly file?: string;
  readonly cause?: unknown;
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
  /** {@link TOKENIZER_VERSION} plus the stop words: snapshots made with another one are re-indexed. */
  readonly tokenizer: string;
  readonly flushDelayMs: number;
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
  "flushDelayMs",
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
      k: number(options, "k1", 1.2, (v) => v >= 0, "a number >= 0"),
      b: number(options, "b", 0.75, (v) => v >= 0 && v <= 1, "a number from 0 to 1"),
      d: number(options, "d", 0.5, (v) => v >= 0, "a number >= 0"),
    },
    minSimilarity: number(options, "minSimilarity", 0.3, (v) => v > 0 && v <= 1, "a number > 0 and <= 1"),
    hybridWeights: { text: w.text as number, vector: w.vector as number },
    stopWords,
    tokenizer:
      stopWords.size === 0
        ? TOKENIZER_VERSION
        : `${TOKENIZER_VERSION}+stop:${[...stopWords].sort().join(",")}`,
    flushDelayMs: number(options, "flushDelayMs", 200, (v) => v >= 0, "a number of milliseconds >= 0"),
    onCorrupt,
    onWarning: onWarning as (warning: Warning) => void,
  };
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
