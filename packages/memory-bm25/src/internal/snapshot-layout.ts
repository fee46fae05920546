import {
  ColumnProblem,
  columnBytes,
  readFloat64s,
  readUint32s,
  StringTable,
  StringTableWriter,
} from "./binary-columns.js";
import { type SectionData, type Snapshot, SnapshotProblem } from "./snapshot-format.js";
import type { PackedIndex } from "./text-index.js";

/**
 * The sections of a version 4 snapshot. Per entry (`count` of them): `lengths` and `createdAt`
 * (64-bit floats), `scopeOf` (32-bit numbers into `scopes`), and the string tables `ids`, `texts`
 * and `extras` (the JSON text of `{ metadata, source }`, empty for neither); `scopes`, a string
 * table of the distinct scope paths; per term (`terms` of them, sorted): the string table `terms`,
 * `counts` and `sizes` (32-bit); `postings`, the packed postings one after the other; and in a
 * store with vectors, `vectors`, `dimensions` 64-bit floats per entry (NaN for an entry without
 * one). Numbers are little-endian. Nothing but the terms and scopes is decoded at open.
 */
const SECTIONS = [
  "lengths",
  "createdAt",
  "scopeOf",
  "scopes",
  "ids",
  "texts",
  "extras",
  "terms",
  "counts",
  "sizes",
  "postings",
  "vectors",
] as const;

/** A scope path as the index keeps it: 1 to 4 non-empty levels. */
const SCOPE_PATH = /^[^/]+(\/[^/]+){0,3}$/;

/** The sections of a snapshot of `index` and, in a store with vectors, `vectors` (see {@link SECTIONS}). */
export function snapshotSections(
  index: PackedIndex,
  vectors: Float64Array | undefined,
): (readonly [string, SectionData])[] {
  const { docs } = index;
  const strings = (values: readonly string[]) => {
    const writer = new StringTableWriter();
    for (const value of values) writer.add(value);
    return writer.finish();
  };
  const table = (t: StringTable) => [columnBytes(t.offsets), t.bytes];
  const sections: (readonly [string, SectionData])[] = [
    ["lengths", columnBytes(index.lengths)],
    ["createdAt", columnBytes(docs.createdAt)],
    ["scopeOf", columnBytes(docs.scopeOf)],
    ["scopes", strings(docs.scopes)],
    ["ids", table(docs.ids)],
    ["texts", table(docs.texts)],
    ["extras", table(docs.extras)],
    ["terms", strings(index.terms)],
    ["counts", columnBytes(index.counts)],
    ["sizes", columnBytes(index.sizes)],
    ["postings", index.postings],
  ];
  if (vectors !== undefined) sections.push(["vectors", columnBytes(vectors)]);
  return sections;
}

/**
 * The index (and vectors, `dimensions` numbers per entry) a snapshot holds. Columns are copied
 * out and checked for size; the entry strings stay in the snapshot's bytes.
 *
 * @throws {SnapshotProblem} `invalid_data` when a section is missing or does not hold what it should.
 */
export function readPackedIndex(snapshot: Snapshot): {
  readonly index: PackedIndex;
  readonly vectors: Float64Array | undefined;
} {
  const { header, sections } = snapshot;
  const { count, terms: termCount, scopes: scopeCount, dimensions } = header;
  const read = <T>(name: (typeof SECTIONS)[number], decode: (bytes: Uint8Array) => T): T => {
    const bytes = sections.get(name);
    if (bytes === undefined) throw new SnapshotProblem(`it has no section "${name}"`, "invalid_data");
    try {
      return decode(bytes);
    } catch (error) {
      if (!(error instanceof ColumnProblem)) throw error;
      throw new SnapshotProblem(`its section "${name}" ${error.message}`, "invalid_data", { cause: error });
    }
  };
  const scopes = read("scopes", (b) => StringTable.read(b, scopeCount).all());
  for (const scope of scopes) {
    if (!SCOPE_PATH.test(scope)) {
      throw new SnapshotProblem(`it holds an invalid scope ${JSON.stringify(scope)}`, "invalid_data");
    }
  }
  const index: PackedIndex = {
    docs: {
      count,
      ids: read("ids", (b) => StringTable.read(b, count)),
      texts: read("texts", (b) => StringTable.read(b, count)),
      extras: read("extras", (b) => StringTable.read(b, count)),
      createdAt: read("createdAt", (b) => readFloat64s(b, count)),
      scopes,
      scopeOf: read("scopeOf", (b) => readUint32s(b, count)),
    },
    lengths: read("lengths", (b) => readFloat64s(b, count)),
    terms: read("terms", (b) => StringTable.read(b, termCount).all()),
    counts: read("counts", (b) => readUint32s(b, termCount)),
    sizes: read("sizes", (b) => readUint32s(b, termCount)),
    postings: read("postings", (b) => b),
  };
  const vectors =
    dimensions === null ? undefined : read("vectors", (b) => readFloat64s(b, count * dimensions));
  return { index, vectors };
}
