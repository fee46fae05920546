import { MemoryError } from "@openrath/core";
import { type StringTable, StringTableWriter } from "./binary-columns.js";

/** An entry as the index holds it, with its scope as a path (`tenant/user/agent/session`). */
export interface StoredDoc {
  readonly id: string;
  readonly text: string;
  readonly scope: string;
  readonly createdAt: number;
  readonly metadata?: Record<string, unknown>;
  readonly source?: string;
}

/** The key of an entry: ids are unique within a scope. */
export function docKey(scope: string, id: string): string {
  return `${scope}\u0000${id}`;
}

/**
 * Entries as a snapshot holds them, one column each: ids, texts and extras (the JSON text of
 * `{ metadata, source }`, empty when the entry has neither) as string tables, creation times, and
 * scopes as numbers into `scopes`.
 */
export interface PackedDocs {
  readonly count: number;
  readonly ids: StringTable;
  readonly texts: StringTable;
  readonly extras: StringTable;
  readonly createdAt: Float64Array;
  readonly scopes: readonly string[];
  readonly scopeOf: Uint32Array;
}

/**
 * The entries of an index by number. Entries loaded from a snapshot stay in its columns and are
 * decoded when asked for (a recall decodes its hits, not the store); entries added later are kept
 * as objects. A removed entry's number is not reused.
 */
export class DocTable {
  private readonly packed: PackedDocs | undefined;
  /** Entries numbered from `packed.count` on. */
  private readonly added: (StoredDoc | undefined)[] = [];
  private live: Uint8Array;
  private next: number;

  /** @throws {Error} when the columns of `packed` are inconsistent (a scope out of range, an empty id). */
  constructor(packed?: PackedDocs) {
    if (packed !== undefined) checkColumns(packed);
    this.packed = packed;
    this.next = packed?.count ?? 0;
    this.live = new Uint8Array(Math.max(1024, this.next)).fill(1, 0, this.next);
  }

  /** Entry numbers handed out (removed ones included). */
  get length(): number {
    return this.next;
  }

  /** Whether entry `n` exists. */
  isLive(n: number): boolean {
    return this.live[n] === 1;
  }

  /** Entry `n`, if it exists (decoded from the snapshot's columns for a loaded entry). */
  get(n: number): StoredDoc | undefined {
    if (this.live[n] !== 1) return undefined;
    const packed = this.packed;
    if (packed === undefined || n >= packed.count) return this.added[n - (packed?.count ?? 0)];
    const doc: StoredDoc = {
      id: packed.ids.get(n),
      text: packed.texts.get(n),
      scope: packed.scopes[packed.scopeOf[n]!]!,
      createdAt: packed.createdAt[n]!,
    };
    return packed.extras.byteLength(n) === 0 ? doc : { ...doc, ...extrasOf(packed.extras.get(n), doc) };
  }

  /** The id of live entry `n`, without decoding its text. */
  id(n: number): string {
    const packed = this.packed;
    return packed !== undefined && n < packed.count
      ? packed.ids.get(n)
      : this.added[n - (packed?.count ?? 0)]!.id;
  }

  /** The scope path of live entry `n`, without decoding its text. */
  scope(n: number): string {
    const packed = this.packed;
    return packed !== undefined && n < packed.count
      ? packed.scopes[packed.scopeOf[n]!]!
      : this.added[n - (packed?.count ?? 0)]!.scope;
  }

  /**
   * Entry numbers by key ({@link docKey}), from the ids and scopes (texts are not read).
   *
   * @throws {MemoryError} `memory_corrupt` when two entries share a key (a snapshot written wrong).
   */
  keys(): Map<string, number> {
    const keys = new Map<string, number>();
    for (let n = 0; n < this.next; n++) {
      if (this.live[n] !== 1) continue;
      const id = this.id(n);
      const scope = this.scope(n);
      const key = docKey(scope, id);
      if (keys.has(key)) {
        throw new MemoryError(
          "memory_corrupt",
          `The memory store's snapshot holds the entry id ${JSON.stringify(id)} twice at scope ${scope}. Restore memory.json.bak or remember the entries again.`,
          { details: { id, scope } },
        );
      }
      keys.set(key, n);
    }
    return keys;
  }

  /** Adds `doc`; returns its number. */
  push(doc: StoredDoc): number {
    const n = this.next++;
    if (n >= this.live.length) {
      const grown = new Uint8Array(this.live.length * 2);
      grown.set(this.live);
      this.live = grown;
    }
    this.live[n] = 1;
    this.added.push(doc);
    return n;
  }

  /** Removes entry `n`. */
  delete(n: number): void {
    this.live[n] = 0;
    const base = this.packed?.count ?? 0;
    if (n >= base) this.added[n - base] = undefined;
  }

  /**
   * The end (exclusive) of the run of live entries that starts at live entry `n`: entries that are
   * all loaded or all added since, so {@link writeRun} can copy a loaded run at once.
   */
  runEnd(n: number): number {
    const limit = this.packed !== undefined && n < this.packed.count ? this.packed.count : this.next;
    let end = n + 1;
    while (end < limit && this.live[end] === 1) end++;
    return end;
  }

  /** Appends the live entries `from` to `to` (a run, see {@link runEnd}) to `writer`; loaded ones as bytes, not decoded. */
  writeRun(writer: DocsWriter, from: number, to: number): void {
    const packed = this.packed;
    if (packed !== undefined && from < packed.count) {
      writer.ids.copyRange(packed.ids, from, to);
      writer.texts.copyRange(packed.texts, from, to);
      writer.extras.copyRange(packed.extras, from, to);
      for (let n = from; n < to; n++) writer.row(packed.scopes[packed.scopeOf[n]!]!, packed.createdAt[n]!);
      return;
    }
    for (let n = from; n < to; n++) {
      const doc = this.added[n - (packed?.count ?? 0)]!;
      writer.ids.add(doc.id);
      writer.texts.add(doc.text);
      writer.extras.add(
        doc.metadata === undefined && doc.source === undefined
          ? ""
          : JSON.stringify({ metadata: doc.metadata, source: doc.source }),
      );
      writer.row(doc.scope, doc.createdAt);
    }
  }
}

/** Builds the columns of {@link PackedDocs}, run by run ({@link DocTable.writeRun}). */
export class DocsWriter {
  readonly ids = new StringTableWriter();
  readonly texts = new StringTableWriter();
  readonly extras = new StringTableWriter();
  private readonly scopeIds = new Map<string, number>();
  private readonly scopes: string[] = [];
  private createdAt = new Float64Array(1024);
  private scopeOf = new Uint32Array(1024);
  private count = 0;

  /** The scope and creation time of the entry whose strings were just added. */
  row(scope: string, createdAt: number): void {
    let id = this.scopeIds.get(scope);
    if (id === undefined) {
      id = this.scopes.length;
      this.scopes.push(scope);
      this.scopeIds.set(scope, id);
    }
    if (this.count === this.createdAt.length) {
      const createdAtGrown = new Float64Array(this.count * 2);
      createdAtGrown.set(this.createdAt);
      this.createdAt = createdAtGrown;
      const scopeOfGrown = new Uint32Array(this.count * 2);
      scopeOfGrown.set(this.scopeOf);
      this.scopeOf = scopeOfGrown;
    }
    this.createdAt[this.count] = createdAt;
    this.scopeOf[this.count] = id;
    this.count++;
  }

  /** The entries written, as columns (views of this writer's buffers). */
  finish(): PackedDocs {
    return {
      count: this.count,
      ids: this.ids.table(),
      texts: this.texts.table(),
      extras: this.extras.table(),
      createdAt: this.createdAt.subarray(0, this.count),
      scopes: this.scopes,
      scopeOf: this.scopeOf.subarray(0, this.count),
    };
  }
}

function checkColumns(packed: PackedDocs): void {
  const { count, ids, texts, extras, createdAt, scopeOf, scopes } = packed;
  if ([ids.count, texts.count, extras.count, createdAt.length, scopeOf.length].some((n) => n !== count)) {
    throw new Error("the entry columns do not have one row per entry");
  }
  for (let n = 0; n < count; n++) {
    if (scopeOf[n]! >= scopes.length) throw new Error(`entry ${n} has a scope number out of range`);
    if (!Number.isFinite(createdAt[n]!)) throw new Error(`entry ${n} has an invalid creation time`);
    if (ids.byteLength(n) === 0) throw new Error(`entry ${n} has an empty id`);
  }
}

/**
 * The metadata and source of a loaded entry from its extras text. The snapshot's checksum held,
 * so a bad one was written so: it is reported when the entry is first read, like a bad posting.
 */
function extrasOf(text: string, doc: StoredDoc): Pick<StoredDoc, "metadata" | "source"> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const { metadata, source } = (parsed ?? {}) as Record<string, unknown>;
  if (
    typeof parsed !== "object" ||
    parsed === null ||
    Array.isArray(parsed) ||
    (metadata !== undefined &&
      (typeof metadata !== "object" || metadata === null || Array.isArray(metadata))) ||
    (source !== undefined && typeof source !== "string")
  ) {
    throw new MemoryError(
      "memory_corrupt",
      `The memory store's snapshot holds entry ${JSON.stringify(doc.id)} at scope ${doc.scope} with metadata or a source that cannot be read (${JSON.stringify(text.slice(0, 200))}). Restore memory.json.bak or remember the entry again.`,
      { details: { id: doc.id, scope: doc.scope } },
    );
  }
  return {
    ...(metadata === undefined ? {} : { metadata: metadata as Record<string, unknown> }),
    ...(source === undefined ? {} : { source }),
  };
}
