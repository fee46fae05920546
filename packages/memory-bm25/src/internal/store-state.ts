import type { LogChange } from "./change-log.js";
import { DocsWriter } from "./doc-table.js";
import { encodeSnapshot, type SnapshotFields } from "./snapshot-format.js";
import { snapshotSections } from "./snapshot-layout.js";
import { docKey, type StoredDoc, TextIndex } from "./text-index.js";
import { type AnalyzerSettings, analyze } from "./tokenize.js";
import { VectorIndex } from "./vector-index.js";

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

  /**
   * The bytes of a snapshot of this state (in pieces to write in order; copies, so later changes
   * do not reach them).
   */
  snapshot(fields: Pick<SnapshotFields, "savedAt" | "tokenizer" | "embedModel" | "log">): {
    readonly chunks: Uint8Array[];
    readonly bytes: number;
  } {
    const packed = this.index.pack(new DocsWriter());
    const { docs } = packed;
    const vectors = this.vectors;
    let rows: Float64Array | undefined;
    if (vectors !== undefined) {
      const size = vectors.dimensions;
      rows = new Float64Array(docs.count * size).fill(Number.NaN);
      for (let i = 0; i < docs.count; i++) {
        const vector = vectors.get(docKey(docs.scopes[docs.scopeOf[i]!]!, docs.ids.get(i)));
        if (vector !== undefined && vector.length === size) rows.set(vector, i * size);
      }
    }
    return encodeSnapshot(
      {
        ...fields,
        dimensions: vectors?.dimensions ?? null,
        count: docs.count,
        terms: packed.terms.length,
        scopes: docs.scopes.length,
      },
      snapshotSections(packed, rows),
    );
  }

  /**
   * A state rebuilt from entries (another analyzer made the snapshot, or vectors change size),
   * keeping the vectors in `vectors` that have `dimensions` numbers.
   */
  static rebuild(
    analyzer: AnalyzerSettings,
    docs: Iterable<StoredDoc>,
    dimensions: number | undefined,
    vectors: (doc: StoredDoc, i: number) => readonly number[] | undefined,
  ): StoreState {
    const state = new StoreState(
      analyzer,
      new TextIndex(),
      dimensions === undefined ? undefined : new VectorIndex(dimensions),
    );
    let i = 0;
    for (const doc of docs) state.put(doc, vectors(doc, i++));
    return state;
  }
}
