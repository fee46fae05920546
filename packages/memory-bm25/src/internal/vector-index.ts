import { type AnyOrama, count, create, getByID, insert, type Results, remove, search } from "@orama/orama";

/** A vector hit: the entry key ({@link docKey}) and its cosine similarity. */
export interface VectorHit {
  readonly key: string;
  readonly score: number;
}

interface VectorDoc {
  readonly id: string;
  readonly scope: string;
  readonly embedding: number[];
}

/**
 * The vectors of a store, in an Orama database used only through Orama's public API (`create`,
 * `insert`, `remove`, `getByID`, `search` in vector mode with a `where` filter on the scope):
 * documents are `{ id: <entry key>, scope, embedding }`, nothing else.
 */
export class VectorIndex {
  private readonly db: AnyOrama;

  constructor(readonly dimensions: number) {
    this.db = create({
      schema: { scope: "enum", embedding: `vector[${dimensions}]` } as const,
    }) as unknown as AnyOrama;
  }

  get size(): number {
    return count(this.db);
  }

  /** The vector of entry `key`, if it has one. */
  get(key: string): number[] | undefined {
    return (getByID(this.db, key) as VectorDoc | undefined)?.embedding;
  }

  /** Stores the vector of entry `key` (replacing one it had). */
  put(key: string, scope: string, vector: readonly number[]): void {
    this.delete(key);
    insert(this.db, { id: key, scope, embedding: Array.from(vector) } as never);
  }

  delete(key: string): void {
    if (getByID(this.db, key) !== undefined) remove(this.db, key);
  }

  /**
   * The entries most similar to `vector` (cosine ≥ `similarity`), best first, among those whose
   * scope path is in `scopes` (`undefined`: all).
   */
  async search(
    vector: readonly number[],
    scopes: readonly string[] | undefined,
    limit: number,
    similarity: number,
  ): Promise<VectorHit[]> {
    if (this.size === 0) return [];
    const results = (await search(this.db, {
      mode: "vector",
      vector: { value: [...vector], property: "embedding" },
      ...(scopes === undefined ? {} : { where: { scope: { in: [...scopes] } } }),
      limit,
      similarity,
      // Without vectors in the hits, Orama sets the stored documents' vectors to null (it strips
      // them from the documents themselves, not from copies), which lost them from the snapshot.
      includeVectors: true,
    } as never)) as Results<VectorDoc>;
    return results.hits.map((hit) => ({ key: hit.id, score: hit.score }));
  }
}
