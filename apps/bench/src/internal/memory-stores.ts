// The two stores the memory bench and the quality harness compare, behind one small interface:
// OpenRath's bm25 memory (through its public MemoryV1 API) and the anchor, MiniSearch with its
// default tokenizer and scoring, given the same scope rule as a memory store (a query sees entries
// at its scope or an enclosing one).
import type { MemoryScope } from "@openrath/core";
import { scopePath } from "@openrath/core/backend";
import { type Bm25MemoryOptions, bm25Memory } from "@openrath/memory-bm25";
import MiniSearch, {
  type Options as MiniSearchOptions,
  type SearchOptions,
  type SearchResult,
} from "minisearch";

/** One entry to store. `scope` defaults to the tenant level, `{ tenant: "default" }`. */
export interface StoreEntry {
  readonly id: string;
  readonly text: string;
  readonly scope?: MemoryScope;
}

/** A store under comparison: add entries, then ask for the ids of the best `topK`, best first. */
export interface RankedStore {
  readonly name: StoreName;
  add(entries: readonly StoreEntry[]): Promise<void>;
  search(query: string, options: { readonly topK: number; readonly scope?: MemoryScope }): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * The stores: bm25 with its defaults; bm25 with one matching feature turned off each (what each
 * feature contributes); MiniSearch with its defaults; MiniSearch with prefix and fuzzy search.
 */
export const STORE_NAMES = [
  "bm25",
  "bm25-no-stemming",
  "bm25-no-prefix",
  "bm25-no-fuzzy",
  "bm25-no-identifiers",
  "bm25-length-terms",
  "minisearch",
  "minisearch-fuzzy",
] as const;
export type StoreName = (typeof STORE_NAMES)[number];

/** The bm25 options of each bm25 store name. */
const BM25_VARIANTS: Record<Extract<StoreName, `bm25${string}`>, Bm25MemoryOptions> = {
  bm25: {},
  "bm25-no-stemming": { stemming: false },
  "bm25-no-prefix": { prefix: false },
  "bm25-no-fuzzy": { fuzzy: false },
  "bm25-no-identifiers": { identifiers: false },
  "bm25-length-terms": { lengthUnit: "terms" },
};

/** MiniSearch's prefix and fuzzy search as its documentation shows them (fuzzy: 0.2 of the term length). */
export const MINISEARCH_FUZZY: SearchOptions = { prefix: true, fuzzy: 0.2 };

/** A MiniSearch document: the entry's text and its scope as a path (`default/ada`). */
export interface MiniSearchDoc {
  readonly id: string;
  readonly text: string;
  readonly scope: string;
}

/**
 * The anchor's configuration: MiniSearch's defaults (split on Unicode spaces and punctuation,
 * lower case, BM25+ ranking, no prefix or fuzzy matching), with the text and scope stored so a hit
 * carries what a memory recall returns.
 */
export const MINISEARCH_OPTIONS: MiniSearchOptions<MiniSearchDoc> = {
  idField: "id",
  fields: ["text"],
  storeFields: ["text", "scope"],
};

/** The scope paths a query asking at `scope` may see: the scope and every level enclosing it. */
export function visibleScopePaths(scope: MemoryScope = {}): ReadonlySet<string> {
  const parts = scopePath(scope).split("/");
  return new Set(parts.map((_, i) => parts.slice(0, i + 1).join("/")));
}

export function toMiniSearchDoc(entry: StoreEntry): MiniSearchDoc {
  return { id: entry.id, text: entry.text, scope: scopePath(entry.scope ?? {}) };
}

/** MiniSearch's answer to a memory recall: the best `topK` hits visible from `visible`. */
export function miniSearchRecall(
  index: MiniSearch<MiniSearchDoc>,
  query: string,
  topK: number,
  visible: ReadonlySet<string>,
  options: SearchOptions = {},
): SearchResult[] {
  return index
    .search(query, { ...options, filter: (hit) => visible.has(hit.scope as string) })
    .slice(0, topK);
}

/** OpenRath's bm25 memory, in memory (no path), with the options of `name`. */
export async function openBm25Store(name: keyof typeof BM25_VARIANTS = "bm25"): Promise<RankedStore> {
  const memory = await bm25Memory(BM25_VARIANTS[name]).open(undefined);
  return {
    name,
    async add(entries) {
      await memory.remember(
        entries.map((e) => ({ id: e.id, text: e.text, ...(e.scope ? { scope: e.scope } : {}) })),
      );
    },
    async search(query, { topK, scope }) {
      const hits = await memory.recall(query, { topK, ...(scope ? { scope } : {}) });
      return hits.map((hit) => hit.entry.id);
    },
    close: () => memory.close(),
  };
}

/** The anchor, MiniSearch with {@link MINISEARCH_OPTIONS}; `minisearch-fuzzy` adds {@link MINISEARCH_FUZZY}. */
export function openMiniSearchStore(name: "minisearch" | "minisearch-fuzzy" = "minisearch"): RankedStore {
  const index = new MiniSearch<MiniSearchDoc>(MINISEARCH_OPTIONS);
  const options = name === "minisearch-fuzzy" ? MINISEARCH_FUZZY : {};
  return {
    name,
    async add(entries) {
      index.addAll(entries.map(toMiniSearchDoc));
    },
    async search(query, { topK, scope }) {
      return miniSearchRecall(index, query, topK, visibleScopePaths(scope), options).map(
        (hit) => hit.id as string,
      );
    },
    close: async () => {},
  };
}

export function openStore(name: StoreName): Promise<RankedStore> {
  return name === "minisearch" || name === "minisearch-fuzzy"
    ? Promise.resolve(openMiniSearchStore(name))
    : openBm25Store(name);
}
