import {
  type AnyOrama,
  components,
  count,
  create,
  getByID,
  insert,
  load,
  type RawData,
  type Results,
  remove,
  save,
  search,
  type Tokenizer,
} from "@orama/orama";
import { tokenize } from "./tokenize.js";

/** What an Orama document of the store holds: an entry, with its scope as a path. */
export interface StoredDoc {
  id: string;
  text: string;
  /** The normalized scope path, `tenant/user/agent/session` for the levels present. */
  scope: string;
  createdAt: number;
  metadata?: Record<string, unknown>;
  source?: string;
  /** Only present while inserting: the vector index keeps the vector, documents hold `null`. */
  embedding?: number[] | null;
}

/** BM25 parameters as Orama names them: `k` is k1. */
export interface Relevance {
  readonly k: number;
  readonly b: number;
  readonly d: number;
}

/** A scored document id. */
export interface ScoredId {
  readonly id: string;
  readonly score: number;
}

/** The parts of Orama's index store this module reads (typed loosely by Orama). */
interface IndexData {
  frequencies: Record<string, Record<number, Record<string, number> | undefined>>;
  tokenOccurrences: Record<string, Record<string, number>>;
  avgFieldLength: Record<string, number | undefined>;
  fieldLengths: Record<string, Record<number, number | undefined>>;
  vectorIndexes: Record<string, { node: { size: number; vectors: Map<number, [number, Float32Array]> } }>;
}

type BaseIndex = ReturnType<typeof components.index.createIndex>;

/** Orama passes the internal id when inserting and the document id when removing. */
function internalIdOf(index: unknown, id: unknown): number {
  const store = (index as { sharedInternalDocumentStore: never }).sharedInternalDocumentStore;
  return components.internalDocumentIDStore.getInternalDocumentId(store, id as string) as number;
}

/**
 * Orama's index with two changes. Query terms match whole tokens only (Orama matches prefixes by
 * default, so "a" would match every word starting with "a"). And BM25 statistics count properly
 * when a text repeats a word: the term frequency is the raw count and the document frequency
 * counts each document once (Orama counts every occurrence, which can make the IDF negative).
 */
function bm25Index(): BaseIndex {
  const base = components.index.createIndex();
  return {
    ...base,
    search: (index, term, tokenizer, language, properties, _exact, _tolerance, ...rest) =>
      base.search(index, term, tokenizer, language, properties, true, 0, ...rest),
    insertDocumentScoreParameters(index, prop, docId, tokens, docsCount) {
      const data = index as unknown as IndexData;
      const id = internalIdOf(index, docId);
      data.avgFieldLength[prop] =
        ((data.avgFieldLength[prop] ?? 0) * (docsCount - 1) + tokens.length) / docsCount;
      data.fieldLengths[prop]![id] = tokens.length;
      const counts: Record<string, number> = {};
      for (const token of tokens) counts[token] = (counts[token] ?? 0) + 1;
      data.frequencies[prop]![id] = counts;
      const occurrences = data.tokenOccurrences[prop]!;
      for (const token of Object.keys(counts)) occurrences[token] = (occurrences[token] ?? 0) + 1;
    },
    insertTokenScoreParameters() {},
    removeDocumentScoreParameters(index, prop, docId, docsCount) {
      const data = index as unknown as IndexData;
      const id = internalIdOf(index, docId);
      const counts = data.frequencies[prop]![id] ?? {};
      const occurrences = data.tokenOccurrences[prop]!;
      for (const token of Object.keys(counts)) {
        const left = (occurrences[token] ?? 1) - 1;
        if (left > 0) occurrences[token] = left;
        else delete occurrences[token];
      }
      const length = data.fieldLengths[prop]![id] ?? 0;
      data.avgFieldLength[prop] =
        docsCount > 1 ? ((data.avgFieldLength[prop] ?? 0) * docsCount - length) / (docsCount - 1) : undefined;
      delete data.fieldLengths[prop]![id];
      delete data.frequencies[prop]![id];
    },
    removeTokenScoreParameters() {},
  };
}

function oramaTokenizer(stopWords: ReadonlySet<string>): Tokenizer {
  return {
    language: "openrath-unicode",
    normalizationCache: new Map(),
    // Orama passes the property name when indexing a document and none when tokenizing a query.
    tokenize: (raw, _language, prop) =>
      typeof raw === "string" ? tokenize(raw, prop === undefined ? "query" : "index", stopWords) : [],
  };
}

/** An Orama database of memory entries; `dimensions` adds a vector index of that size. */
export class OramaIndex {
  readonly db: AnyOrama;
  readonly dimensions: number | undefined;

  constructor(dimensions: number | undefined, stopWords: ReadonlySet<string>) {
    this.dimensions = dimensions;
    this.db = create({
      schema: {
        text: "string",
        scope: "enum",
        ...(dimensions === undefined ? {} : { embedding: `vector[${dimensions}]` }),
      } as const,
      components: { tokenizer: oramaTokenizer(stopWords), index: bm25Index() },
    }) as unknown as AnyOrama;
  }

  get size(): number {
    return count(this.db);
  }

  get(id: string): StoredDoc | undefined {
    return getByID(this.db, id) as StoredDoc | undefined;
  }

  has(id: string): boolean {
    return this.get(id) !== undefined;
  }

  /** Every document, in insertion order. */
  all(): StoredDoc[] {
    const docs = (this.db.data.docs as unknown as { docs: Record<string, StoredDoc | undefined> }).docs;
    return Object.values(docs).filter((d): d is StoredDoc => d !== undefined);
  }

  /** The vector stored for `id`, if any. */
  vector(id: string): Float32Array | undefined {
    const internalId = this.internalId(id);
    if (internalId === undefined) return undefined;
    return this.vectorIndex()?.vectors.get(internalId)?.[1];
  }

  /** Inserts `doc` (replacing a document with the same id) with an optional vector. */
  put(doc: StoredDoc, vector?: readonly number[] | Float32Array): void {
    if (this.has(doc.id)) this.delete(doc.id);
    const record: StoredDoc = { ...doc };
    delete record.embedding;
    if (vector !== undefined && this.dimensions !== undefined) record.embedding = Array.from(vector);
    insert(this.db, record as never);
    // The vector index keeps its own copy; Orama's searches null the document's field anyway.
    if (record.embedding !== undefined) record.embedding = null;
  }

  delete(id: string): boolean {
    if (!this.has(id)) return false;
    remove(this.db, id);
    return true;
  }

  /** BM25 ranking of the documents whose scope is one of `scopes`. */
  fullText(
    term: string,
    scopes: readonly string[],
    limit: number,
    relevance: Relevance,
  ): Promise<ScoredId[]> {
    return this.run({ term, where: { scope: { in: [...scopes] } }, limit, relevance: { ...relevance } });
  }

  /** Cosine ranking of the documents whose scope is one of `scopes`, at least `similarity`. */
  vectorSearch(
    vector: readonly number[],
    scopes: readonly string[],
    limit: number,
    similarity: number,
  ): Promise<ScoredId[]> {
    return this.run({
      mode: "vector",
      vector: { value: [...vector], property: "embedding" },
      where: { scope: { in: [...scopes] } },
      limit,
      similarity,
      includeVectors: true,
    });
  }

  /** Orama's hybrid ranking: each side scaled to its best hit, then weighted and summed. */
  hybrid(
    term: string,
    vector: readonly number[],
    scopes: readonly string[],
    limit: number,
    options: { relevance: Relevance; similarity: number; weights: { text: number; vector: number } },
  ): Promise<ScoredId[]> {
    return this.run({
      mode: "hybrid",
      term,
      vector: { value: [...vector], property: "embedding" },
      where: { scope: { in: [...scopes] } },
      limit,
      similarity: options.similarity,
      relevance: { ...options.relevance },
      hybridWeights: { ...options.weights },
    });
  }

  /** Orama's serializable form of the whole database. */
  save(): RawData {
    return save(this.db);
  }

  /** Replaces the content with a saved form (of a database with the same schema and tokenizer). */
  load(raw: RawData): void {
    load(this.db, raw);
  }

  private async run(params: Record<string, unknown>): Promise<ScoredId[]> {
    const results = (await search(this.db, params as never)) as Results<StoredDoc>;
    return results.hits.map((hit) => ({ id: hit.id, score: hit.score }));
  }

  private internalId(id: string): number | undefined {
    const store = this.db.internalDocumentIDStore as unknown as { idToInternalId: Map<string, number> };
    return store.idToInternalId.get(id);
  }

  private vectorIndex(): IndexData["vectorIndexes"][string]["node"] | undefined {
    return (this.db.data.index as unknown as IndexData).vectorIndexes.embedding?.node;
  }
}
