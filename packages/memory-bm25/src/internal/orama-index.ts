import {
  type AnyOrama,
  components,
  count,
  create,
  getByID,
  insert,
  type Results,
  remove,
  search,
  type Tokenizer,
} from "@orama/orama";
import { PostingWriter, TokenIndex } from "./token-index.js";
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

/**
 * The index as snapshots hold it from format version 2 on: each entry once, and the postings of
 * the token index packed into one base64 string. Orama's own saved form is several times slower
 * to load (nested objects for every entry's term frequencies, the radix tree as JSON, the entries
 * twice).
 */
export interface CompactIndex {
  /** The entries, in insertion order; entry `i` (from 0) is `i + 1` in `postings`. */
  readonly docs: readonly StoredDoc[];
  /** Every indexed token once. */
  readonly tokens: readonly string[];
  /** For each token, the number of entries that hold it. */
  readonly counts: readonly number[];
  /** The postings of the tokens, in order, base64 (see `PostingWriter`). */
  readonly postings: string;
  /** Orama's running mean of the entry lengths in tokens, kept as is so that scores do not move. */
  readonly avgLength: number | null;
  /** Per entry, its vector or `null`; only in a store with vectors. */
  readonly vectors?: readonly (readonly number[] | null)[];
}

/** The parts of Orama's index store this module reads (typed loosely by Orama). */
interface IndexData {
  indexes: {
    text: { node: TokenIndex };
    scope: { node: { insert(value: string, docId: number): void } };
  };
  avgFieldLength: Record<string, number | undefined>;
  fieldLengths: Record<string, Record<number, number | undefined>>;
  vectorIndexes: Record<
    string,
    {
      node: {
        size: number;
        vectors: Map<number, [number, Float32Array]>;
        add(docId: number, vector: readonly number[]): void;
      };
    }
  >;
}

/** Orama's document and id stores, as this module reads and rebuilds them. */
interface DocsData {
  docs: Record<number, StoredDoc | undefined>;
  count: number;
}
interface IdStore {
  idToInternalId: Map<string, number>;
  internalIdToId: string[];
}

type BaseIndex = ReturnType<typeof components.index.createIndex>;

/** Orama passes the internal id when inserting and the document id when removing. */
function internalIdOf(index: unknown, id: unknown): number {
  const store = (index as { sharedInternalDocumentStore: never }).sharedInternalDocumentStore;
  return components.internalDocumentIDStore.getInternalDocumentId(store, id as string) as number;
}

/**
 * Orama's index with its text search replaced. The `text` property is indexed by a
 * {@link TokenIndex} instead of Orama's radix tree: query terms match whole tokens only (Orama
 * matches prefixes by default, so "a" would match every word starting with "a"), and each posting
 * keeps its term frequencies. BM25 counts properly when a text repeats a word: the term frequency
 * is the raw count and the document frequency counts each document once (Orama counts every
 * occurrence, which can make the IDF negative). Search returns every document matching any query
 * token, best first (Orama's `threshold: 1`, the default, which this store never changes).
 */
function bm25Index(): BaseIndex {
  const base = components.index.createIndex();
  return {
    ...base,
    create(orama, store, schema) {
      const index = base.create(orama, store, schema) as unknown as IndexData;
      index.indexes.text.node = new TokenIndex();
      return index as never;
    },
    search(
      index,
      term,
      tokenizer,
      language,
      properties,
      _exact,
      _tolerance,
      boost,
      relevance,
      docsCount,
      where,
    ) {
      const data = index as unknown as IndexData;
      const scores = new Map<number, number>();
      if (!properties.includes("text")) return [];
      const weight = (boost as Record<string, number | undefined>).text ?? 1;
      const lengths = data.fieldLengths.text!;
      const average = data.avgFieldLength.text!;
      const { k, b, d } = relevance;
      for (const token of tokenizer.tokenize(term, language) as string[]) {
        const posting = data.indexes.text.node.posting(token);
        if (posting === undefined) continue;
        const idf = Math.log(1 + (docsCount - posting.size + 0.5) / (posting.size + 0.5));
        for (const [id, tf] of posting) {
          if (where && !where.has(id)) continue;
          // Orama's BM25 (components/algorithms.js), with raw term frequencies.
          const score = (idf * (d + tf * (k + 1))) / (tf + k * (1 - b + (b * lengths[id]!) / average));
          scores.set(id, (scores.get(id) ?? 0) + score * weight);
        }
      }
      return Array.from(scores).sort((x, y) => y[1] - x[1]);
    },
    insertDocumentScoreParameters(index, prop, internalId, tokens, docsCount) {
      const data = index as unknown as IndexData;
      data.avgFieldLength[prop] =
        ((data.avgFieldLength[prop] ?? 0) * (docsCount - 1) + tokens.length) / docsCount;
      data.fieldLengths[prop]![internalIdOf(index, internalId)] = tokens.length;
    },
    insertTokenScoreParameters() {},
    removeDocumentScoreParameters(index, prop, docId, docsCount) {
      const data = index as unknown as IndexData;
      const id = internalIdOf(index, docId);
      const length = data.fieldLengths[prop]![id] ?? 0;
      data.avgFieldLength[prop] =
        docsCount > 1 ? ((data.avgFieldLength[prop] ?? 0) * docsCount - length) / (docsCount - 1) : undefined;
      delete data.fieldLengths[prop]![id];
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
  /** Number of entries by scope path. */
  private readonly scopeCounts = new Map<string, number>();

  constructor(dimensions: number | undefined, stopWords: ReadonlySet<string>) {
    this.dimensions = dimensions;
    this.db = create({
      schema: {
        text: "string",
        scope: "enum",
        ...(dimensions === undefined ? {} : { embedding: `vector[${dimensions}]` }),
      } as const,
      // Orama's sort index (on `text`) is never used: recall orders by score.
      sort: { enabled: false },
      components: { tokenizer: oramaTokenizer(stopWords), index: bm25Index() },
    }) as unknown as AnyOrama;
  }

  get size(): number {
    return count(this.db);
  }

  /** Number of entries whose scope is one of `scopes` (distinct paths). */
  countIn(scopes: readonly string[]): number {
    let total = 0;
    for (const scope of scopes) total += this.scopeCounts.get(scope) ?? 0;
    return total;
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
    this.delete(doc.id);
    const record: StoredDoc = { ...doc };
    delete record.embedding;
    if (vector !== undefined && this.dimensions !== undefined) record.embedding = Array.from(vector);
    insert(this.db, record as never);
    this.countScope(record.scope, 1);
    // The vector index keeps its own copy; Orama's searches null the document's field anyway.
    if (record.embedding !== undefined) record.embedding = null;
  }

  delete(id: string): boolean {
    const doc = this.get(id);
    if (doc === undefined) return false;
    remove(this.db, id);
    this.countScope(doc.scope, -1);
    return true;
  }

  /** BM25 ranking of the documents whose scope is one of `scopes` (`undefined`: all documents). */
  fullText(
    term: string,
    scopes: readonly string[] | undefined,
    limit: number,
    relevance: Relevance,
  ): Promise<ScoredId[]> {
    return this.run({ term, ...where(scopes), limit, relevance: { ...relevance } });
  }

  /**
   * Cosine ranking of the documents whose scope is one of `scopes` (`undefined`: all documents),
   * at least `similarity`.
   */
  vectorSearch(
    vector: readonly number[],
    scopes: readonly string[] | undefined,
    limit: number,
    similarity: number,
  ): Promise<ScoredId[]> {
    return this.run({
      mode: "vector",
      vector: { value: [...vector], property: "embedding" },
      ...where(scopes),
      limit,
      similarity,
      includeVectors: true,
    });
  }

  /**
   * Orama's hybrid ranking of the documents whose scope is one of `scopes` (`undefined`: all
   * documents): each side scaled to its best hit among them, then weighted and summed.
   */
  hybrid(
    term: string,
    vector: readonly number[],
    scopes: readonly string[] | undefined,
    limit: number,
    options: { relevance: Relevance; similarity: number; weights: { text: number; vector: number } },
  ): Promise<ScoredId[]> {
    return this.run({
      mode: "hybrid",
      term,
      vector: { value: [...vector], property: "embedding" },
      ...where(scopes),
      limit,
      similarity: options.similarity,
      relevance: { ...options.relevance },
      hybridWeights: { ...options.weights },
    });
  }

  /** The compact serializable form of the whole database (snapshot format version 2). */
  toCompact(): CompactIndex {
    const data = this.db.data.index as unknown as IndexData;
    const stored = (this.db.data.docs as unknown as DocsData).docs;
    const vectorIndex = this.vectorIndex();
    // Entries are numbered anew, 1, 2, … in the order of their internal ids.
    const position = new Map<number, number>();
    const docs: StoredDoc[] = [];
    const vectors: (number[] | null)[] = [];
    for (const key of Object.keys(stored)) {
      const internalId = Number(key);
      const doc = stored[internalId];
      if (doc === undefined) continue;
      const { embedding: _, ...entry } = doc;
      docs.push(entry);
      position.set(internalId, docs.length);
      if (vectorIndex) {
        const vector = vectorIndex.vectors.get(internalId)?.[1];
        vectors.push(vector ? Array.from(vector) : null);
      }
    }
    const tokens: string[] = [];
    const counts: number[] = [];
    const writer = new PostingWriter();
    data.indexes.text.node.forEach((token, docIds, tfs) => {
      const ids = docIds.map((id) => position.get(id)!);
      tokens.push(token);
      counts.push(ids.length);
      writer.add(ids, tfs);
    });
    return {
      docs,
      tokens,
      counts,
      postings: Buffer.from(writer.finish()).toString("base64"),
      avgLength: data.avgFieldLength.text ?? null,
      ...(vectorIndex ? { vectors } : {}),
    };
  }

  /**
   * Replaces the content of this (new) index with a compact form ({@link toCompact}) made with the
   * same tokenizer; entries get internal ids 1, 2, … in order. `docs` must already be checked.
   *
   * @throws {Error} when the postings or vectors are inconsistent.
   */
  loadCompact(body: CompactIndex): void {
    const { docs, vectors } = body;
    const data = this.db.data.index as unknown as IndexData;
    const ids = this.db.internalDocumentIDStore as unknown as IdStore;
    const vectorIndex = this.vectorIndex();
    if (vectorIndex && vectors?.length !== docs.length)
      throw new Error("the vectors do not match the entries");
    const lengths = data.indexes.text.node.load(
      body.tokens,
      body.counts,
      Buffer.from(body.postings, "base64"),
      docs.length,
    );
    const stored: Record<number, StoredDoc> = {};
    const fieldLengths: Record<number, number> = {};
    const scopes = data.indexes.scope.node;
    for (let i = 0; i < docs.length; i++) {
      const internalId = i + 1;
      const doc = docs[i]!;
      if (ids.idToInternalId.has(doc.id)) throw new Error(`the entry id ${JSON.stringify(doc.id)} repeats`);
      ids.idToInternalId.set(doc.id, internalId);
      ids.internalIdToId.push(doc.id);
      fieldLengths[internalId] = lengths[internalId]!;
      scopes.insert(doc.scope, internalId);
      this.countScope(doc.scope, 1);
      const record = doc as StoredDoc;
      if (vectorIndex) {
        const vector = vectors![i];
        if (vector !== null) {
          if (
            !Array.isArray(vector) ||
            vector.length !== vectorIndex.size ||
            !vector.every(Number.isFinite)
          ) {
            throw new Error(
              `the vector of entry ${JSON.stringify(doc.id)} is not ${vectorIndex.size} finite numbers`,
            );
          }
          vectorIndex.add(internalId, vector);
          // As after `put`: Orama removes a vector only when the document has the field.
          record.embedding = null;
        }
      }
      stored[internalId] = record;
    }
    data.fieldLengths.text = fieldLengths;
    data.avgFieldLength.text = docs.length > 0 ? (body.avgLength ?? undefined) : undefined;
    const docStore = this.db.data.docs as unknown as DocsData;
    docStore.docs = stored;
    docStore.count = docs.length;
  }

  private async run(params: Record<string, unknown>): Promise<ScoredId[]> {
    const results = (await search(this.db, params as never)) as Results<StoredDoc>;
    return results.hits.map((hit) => ({ id: hit.id, score: hit.score }));
  }

  private countScope(scope: string, delta: number): void {
    const n = (this.scopeCounts.get(scope) ?? 0) + delta;
    if (n > 0) this.scopeCounts.set(scope, n);
    else this.scopeCounts.delete(scope);
  }

  private internalId(id: string): number | undefined {
    const store = this.db.internalDocumentIDStore as unknown as { idToInternalId: Map<string, number> };
    return store.idToInternalId.get(id);
  }

  private vectorIndex(): IndexData["vectorIndexes"][string]["node"] | undefined {
    return (this.db.data.index as unknown as IndexData).vectorIndexes.embedding?.node;
  }
}

function where(scopes: readonly string[] | undefined): { where?: { scope: { in: string[] } } } {
  return scopes === undefined ? {} : { where: { scope: { in: [...scopes] } } };
}

/** Orama's saved database (snapshot format version 1), as far as {@link compactFromOrama} reads it. */
export interface OramaSaved {
  readonly internalDocumentIDStore?: { readonly internalIdToId?: unknown };
  readonly docs?: { readonly docs?: Record<string, unknown> };
  readonly index?: {
    readonly frequencies?: { readonly text?: Record<string, Record<string, number> | null | undefined> };
    readonly avgFieldLength?: { readonly text?: number | null };
    readonly vectorIndexes?: Record<string, { readonly vectors?: unknown }>;
  };
}

/**
 * The compact form of Orama's saved database (snapshot format version 1) with checked entries:
 * the token index comes from the saved term frequencies of each entry, vectors by internal id.
 *
 * @throws {Error} when the term frequencies are missing or invalid.
 */
export function compactFromOrama(raw: OramaSaved, dimensions: number | undefined): CompactIndex {
  const stored = raw.docs?.docs ?? {};
  const frequencies = raw.index?.frequencies?.text;
  if (typeof frequencies !== "object" || frequencies === null) throw new Error("it has no term frequencies");
  const savedVectors = new Map<number, number[]>();
  const saved = raw.index?.vectorIndexes?.embedding?.vectors;
  if (dimensions !== undefined && Array.isArray(saved)) {
    for (const item of saved as unknown[]) {
      const [internalId, pair] = item as [number, [number, number[]]];
      if (Array.isArray(pair?.[1])) savedVectors.set(internalId, pair[1]);
    }
  }
  const docs: StoredDoc[] = [];
  const vectors: (number[] | null)[] = [];
  const postings = new Map<string, { ids: number[]; tfs: number[] }>();
  for (const key of Object.keys(stored)) {
    const doc = stored[key] as StoredDoc | undefined;
    if (doc === undefined || doc === null) continue;
    const { embedding: _, ...entry } = doc;
    docs.push(entry);
    vectors.push(savedVectors.get(Number(key)) ?? null);
    const counts = frequencies[key];
    if (typeof counts !== "object" || counts === null) {
      throw new Error(`entry ${JSON.stringify(doc.id)} has no term frequencies`);
    }
    for (const token of Object.keys(counts)) {
      const tf = counts[token];
      if (!Number.isInteger(tf) || tf! < 1)
        throw new Error(`entry ${JSON.stringify(doc.id)} has an invalid term frequency`);
      let posting = postings.get(token);
      if (posting === undefined) {
        posting = { ids: [], tfs: [] };
        postings.set(token, posting);
      }
      posting.ids.push(docs.length);
      posting.tfs.push(tf!);
    }
  }
  const writer = new PostingWriter();
  for (const { ids, tfs } of postings.values()) writer.add(ids, tfs);
  return {
    docs,
    tokens: [...postings.keys()],
    counts: [...postings.values()].map((p) => p.ids.length),
    postings: Buffer.from(writer.finish()).toString("base64"),
    avgLength: raw.index?.avgFieldLength?.text ?? null,
    ...(dimensions === undefined ? {} : { vectors }),
  };
}
