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
    this.prepare(changes)();
  }

  /**
   * Does the work of `changes` that can fail — analyzing the texts stored and the texts replaced —
   * and returns the step that applies them, which only moves data between structures. A store logs
   * a batch between the two, so a batch that cannot be prepared is neither logged nor applied.
   */
  prepare(changes: readonly LogChange[]): () => void {
    const steps: (() => void)[] = [];
    // Texts in place once the earlier changes of the batch are applied, to analyze what a later
    // change of the same key removes.
    const pending = new Map<string, StoredDoc | null>();
    const current = (key: string) =>
      pending.has(key) ? (pending.get(key) ?? undefined) : this.index.get(key);
    for (const change of changes) {
      const scope = change.op === "put" ? change.doc.scope : change.scope;
      const key = docKey(scope, change.op === "put" ? change.doc.id : change.id);
      const old = current(key);
      const removed = old === undefined ? undefined : analyze(old.text, this.analyzer);
      if (removed !== undefined) {
        steps.push(() => {
          this.index.remove(key, removed);
          this.vectors?.delete(key);
        });
      }
      if (change.op === "put") {
        const { doc, vector } = change;
        const added = analyze(doc.text, this.analyzer);
        steps.push(() => {
          this.index.add(doc, added);
          if (
            this.vectors !== undefined &&
            vector !== undefined &&
            vector.length === this.vectors.dimensions
          ) {
            this.vectors.put(key, doc.scope, vector);
          }
        });
        pending.set(key, doc);
      } else {
        pending.set(key, null);
      }
    }
    return () => {
      for (const step of steps) step();
    };
  }

  /** Stores `doc` (replacing the entry with its key) with an optional vector. */
  put(doc: StoredDoc, vector?: readonly number[]): void {
    this.apply([{ op: "put", doc, ...(vector === undefined ? {} : { vector }) }]);
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
