// The two stores the memory bench and the quality harness compare, behind one small interface:
// OpenRath's bm25 memory (through its public MemoryV1 API) and the anchor, MiniSearch with its
// default tokenizer and scoring, given the same scope rule as a memory store (a query sees entries
// at its scope or an enclosing one).
import type { MemoryScope } from "@openrath/core";
import { scopePath } from "@openrath/core/backend";
import { bm25Memory } from "@openrath/memory-bm25";
import MiniSearch, { type Options as MiniSearchOptions, type SearchResult } from "minisearch";

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

export const STORE_NAMES = ["bm25", "minisearch"] as const;
export type StoreName = (typeof STORE_NAMES)[number];

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
): SearchResult[] {
  return index.search(query, { filter: (hit) => visible.has(hit.scope as string) }).slice(0, topK);
}

/** OpenRath's bm25 memory, in memory (no path). */
export async function openBm25Store(): Promise<RankedStore> {
  const memory = await bm25Memory().open(undefined);
  return {
    name: "bm25",
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

/** The anchor, MiniSearch with {@link MINISEARCH_OPTIONS}. */
export function openMiniSearchStore(): RankedStore {
  const index = new MiniSearch<MiniSearchDoc>(MINISEARCH_OPTIONS);
  return {
    name: "minisearch",
    async add(entries) {
      index.addAll(entries.map(toMiniSearchDoc));
    },
    async search(query, { topK, scope }) {
      return miniSearchRecall(index, query, topK, visibleScopePaths(scope)).map((hit) => hit.id as string);
    },
    close: async () => {},
  };
}

export function openStore(name: StoreName): Promise<RankedStore> {
  return name === "bm25" ? openBm25Store() : Promise.resolve(openMiniSearchStore());
}
