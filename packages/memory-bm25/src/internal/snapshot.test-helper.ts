import { readFileSync, writeFileSync } from "node:fs";
import {
  decodeSnapshot,
  encodeSnapshot,
  type SnapshotFields,
  type SnapshotHeader,
} from "./snapshot-format.js";

/** The fields a writer chooses, out of a header read back. */
export function fieldsOf(header: SnapshotHeader): SnapshotFields {
  const { savedAt, tokenizer, dimensions, embedModel, count, terms, scopes, log } = header;
  return { savedAt, tokenizer, dimensions, embedModel, count, terms, scopes, log };
}

/** Writes `chunks` (an encoded snapshot) to `file`. */
export function writeChunks(file: string, encoded: { readonly chunks: readonly Uint8Array[] }): void {
  writeFileSync(file, Buffer.concat(encoded.chunks));
}

/**
 * Rewrites snapshot `file` with the header fields and sections `change` returns (a fresh,
 * matching checksum).
 */
export function rewriteSnapshot(
  file: string,
  change: (
    fields: SnapshotFields,
    sections: Map<string, Uint8Array>,
  ) => { fields: SnapshotFields; sections: Iterable<readonly [string, Uint8Array]> },
): void {
  const snapshot = decodeSnapshot(readFileSync(file));
  const { fields, sections } = change(fieldsOf(snapshot.header), new Map(snapshot.sections));
  writeChunks(file, encodeSnapshot(fields, sections));
}

/** Replaces `from` by `to` in the bytes of `file` (read and written as Latin-1, so binary parts are kept). */
export function replaceInFile(file: string, from: string, to: string): void {
  const text = readFileSync(file).toString("latin1");
  if (!text.includes(from)) throw new Error(`${file} does not contain ${JSON.stringify(from)}`);
  writeFileSync(file, Buffer.from(text.replace(from, to), "latin1"));
}
