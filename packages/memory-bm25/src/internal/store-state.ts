import type { LogChange } from "./change-log.js";
import { type CompactIndex, docKey, type StoredDoc, TextIndex } from "./text-index.js";
import { type AnalyzerSettings, analyze } from "./tokenize.js";
import { VectorIndex } from "./vector-index.js";

/** The body of a snapshot (format version 3): the text index and, in a store with vectors, one per entry. */
export interface SnapshotBody extends CompactIndex {
  readonly vectors?: readonly (readonly number[] | null)[];
}

/**
 * The in-memory state of a store: its text index and its vectors. Changes are applied here only
 * after they were logged; applying cannot fail for a change that was prepared from checked input.
 */
export class StoreState {
  index: TextIndex;
  vectors: VectorIndex | undefined;

  constructor(
    private readonly analyzer: AnalyzerSettings,
    index?: TextIndex,
    vectors?: VectorIndex,
  ) {
    this.index = index ?? new TextIndex();
    this.vectors = vectors;
  }

  get size(): number {
    return this.index.size;
  }

  /** Applies logged changes in order. */
  apply(changes: readonly LogChange[]): void {
    for (const change of changes) {
      if (change.op === "put") this.put(change.doc, change.vector);
      else this.delete(change.scope, change.id);
    }
  }

  /** Stores `doc` (replacing the entry with its key) with an optional vector. */
  put(doc: StoredDoc, vector?: readonly number[]): void {
    const key = docKey(doc.scope, doc.id);
    this.delete(doc.scope, doc.id);
    this.index.add(doc, analyze(doc.text, this.analyzer));
    if (this.vectors !== undefined && vector !== undefined && vector.length === this.vectors.dimensions) {
      this.vectors.put(key, doc.scope, vector);
    }
  }

  /** Removes the entry `id` at scope path `scope`; returns it. */
  delete(scope: string, id: string): StoredDoc | undefined {
    const key = docKey(scope, id);
    const old = this.index.get(key);
    if (old === undefined) return undefined;
    this.index.remove(key, analyze(old.text, this.analyzer));
    this.vectors?.delete(key);
    return old;
  }

  /** The snapshot body of this state. */
  toBody(): SnapshotBody {
    const compact = this.index.toCompact();
    const vectors = this.vectors;
    if (vectors === undefined) return compact;
    return { ...compact, vectors: compact.docs.map((doc) => vectors.get(docKey(doc.scope, doc.id)) ?? null) };
  }

  /**
   * A state rebuilt from entries (another analyzer made the snapshot, or vectors change size),
   * keeping the vectors in `vectors` that have `dimensions` numbers.
   */
  static rebuild(
    analyzer: AnalyzerSettings,
    docs: Iterable<StoredDoc>,
    dimensions: number | undefined,
    vectors: (doc: StoredDoc) => readonly number[] | undefined,
  ): StoreState {
    const state = new StoreState(
      analyzer,
      new TextIndex(),
      dimensions === undefined ? undefined : new VectorIndex(dimensions),
    );
    for (const doc of docs) state.put(doc, vectors(doc));
    return state;
  }
}
