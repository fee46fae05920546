import { rename } from "node:fs/promises";
import { MemoryError } from "@openrath/core";
import { logGenerations, readLog } from "./change-log.js";
import type { Settings } from "./settings.js";
import { readSnapshot, type Snapshot, SnapshotProblem } from "./snapshot-file.js";
import { type SnapshotBody, StoreState } from "./store-state.js";
import { docKey, type StoredDoc, TextIndex } from "./text-index.js";
import { VectorIndex } from "./vector-index.js";

/** A store's state as found on disk. */
export interface LoadedStore {
  readonly state: StoreState;
  readonly embedModel: string | null;
  /** The generation of the log to append to, and how many of its bytes are intact. */
  readonly generation: number;
  readonly validBytes: number | undefined;
  /** The `log` of the snapshot on disk (`undefined`: no snapshot). */
  readonly snapshotLog: number | undefined;
  readonly snapshotBytes: number;
  /** Whether the state differs from what the snapshot holds in a way the log does not record. */
  readonly needsCompaction: boolean;
}

/**
 * Loads the store of directory `dir`: the snapshot `file` (or its backup, see `onCorrupt`), then
 * every change-log generation from the snapshot's on, cutting off a write a crash interrupted.
 *
 * @throws {MemoryError} `memory_corrupt`, or `memory_unsupported_version` for a snapshot or log
 *   written by a newer version.
 */
export async function loadStore(settings: Settings, dir: string, file: string): Promise<LoadedStore> {
  const found = await loadSnapshot(settings, file);
  const state = found?.state ?? new StoreState(settings.analyzer);
  const generations = await logGenerations(dir);
  const from = found?.header.log ?? generations[0] ?? 1;
  const replay = generations.filter((g) => g >= from);
  let generation = replay.at(-1) ?? from;
  let validBytes: number | undefined;
  for (const g of replay) {
    let log: Awaited<ReturnType<typeof readLog>>;
    try {
      log = await readLog(dir, g);
    } catch (error) {
      throw asMemoryError(error, file);
    }
    if (log === undefined) continue;
    for (const batch of log.batches) {
      try {
        state.apply(batch);
      } catch (error) {
        throw new MemoryError(
          "memory_corrupt",
          `The change log of ${file} (generation ${g}) holds a change that cannot be applied: ${(error as Error).message}.`,
          { cause: error, details: { file, generation: g } },
        );
      }
    }
    if (g === generation) validBytes = log.validBytes;
    if (log.torn) {
      settings.onWarning({
        code: "log_repaired",
        message: `The change log of ${file} (generation ${g}) ended in a write that a crash interrupted before it was acknowledged; it was cut off.`,
        file,
      });
    }
  }
  if (replay.length === 0) generation = from;
  return {
    state,
    embedModel: found?.embedModel ?? settings.embedModel ?? null,
    generation,
    validBytes,
    snapshotLog: found?.fromBackup ? undefined : found?.header.log,
    snapshotBytes: found?.bytes ?? 0,
    needsCompaction: found?.needsCompaction ?? false,
  };
}

interface FoundSnapshot {
  readonly state: StoreState;
  readonly header: Snapshot["header"];
  readonly embedModel: string | null;
  readonly bytes: number;
  readonly needsCompaction: boolean;
  readonly fromBackup: boolean;
}

function asMemoryError(error: unknown, file: string): unknown {
  if (!(error instanceof SnapshotProblem)) return error;
  return new MemoryError(
    error.reason === "newer_version" || error.reason === "old_version"
      ? "memory_unsupported_version"
      : "memory_corrupt",
    `The memory store ${file} cannot be loaded: ${error.message}.`,
    { cause: error, details: { file, reason: error.reason } },
  );
}

/** The snapshot `file` or its backup, as the `onCorrupt` option says; `undefined` when there is neither. */
async function loadSnapshot(settings: Settings, file: string): Promise<FoundSnapshot | undefined> {
  const backup = `${file}.bak`;
  let main: FoundSnapshot | undefined;
  try {
    main = await fromFile(settings, file, false);
  } catch (error) {
    if (!(error instanceof SnapshotProblem)) throw error;
    const unsupported = error.reason === "newer_version" || error.reason === "old_version";
    let fallback: FoundSnapshot | undefined;
    let backupProblem: SnapshotProblem | undefined;
    if (!unsupported) {
      try {
        fallback = await fromFile(settings, backup, true);
      } catch (problem) {
        if (!(problem instanceof SnapshotProblem)) throw problem;
        backupProblem = problem;
      }
    }
    if (fallback && settings.onCorrupt === "use-backup") {
      const aside = `${file}.corrupt-${new Date().toISOString().replace(/[:.]/g, "-")}`;
      await rename(file, aside);
      settings.onWarning({
        code: "backup_loaded",
        message: `The memory snapshot ${file} is corrupt: ${error.message}. Loaded the previous snapshot ${backup} instead (${fallback.state.size} entries, then its change log); the corrupt file was kept as ${aside}.`,
        file,
        cause: error,
      });
      return { ...fallback, needsCompaction: true };
    }
    const backupNote = unsupported
      ? ""
      : fallback
        ? ` The previous snapshot ${backup} is intact (${fallback.state.size} entries): open with the bm25Memory option onCorrupt: "use-backup" to load it, or move it over ${file}.`
        : backupProblem
          ? ` Its backup ${backup} is not usable either: ${backupProblem.message}.`
          : ` There is no backup ${backup}.`;
    throw new MemoryError(
      unsupported ? "memory_unsupported_version" : "memory_corrupt",
      `The memory snapshot ${file} cannot be loaded: ${error.message}.${backupNote}`,
      {
        cause: error,
        details: {
          file,
          reason: error.reason,
          backup: fallback ? { file: backup, entries: fallback.state.size } : undefined,
        },
      },
    );
  }
  if (main) return main;
  let fromBackup: FoundSnapshot | undefined;
  try {
    fromBackup = await fromFile(settings, backup, true);
  } catch (problem) {
    if (!(problem instanceof SnapshotProblem)) throw problem;
    throw new MemoryError(
      problem.reason === "newer_version" ? "memory_unsupported_version" : "memory_corrupt",
      `The memory snapshot ${file} is missing and its backup ${backup} cannot be loaded: ${problem.message}. Move the backup away to start an empty store.`,
      { cause: problem, details: { file: backup, reason: problem.reason } },
    );
  }
  if (fromBackup) {
    settings.onWarning({
      code: "backup_loaded",
      message: `The memory snapshot ${file} is missing (a save was interrupted); loaded the previous snapshot ${backup} (${fromBackup.state.size} entries, then its change log).`,
      file,
    });
    return { ...fromBackup, needsCompaction: true };
  }
  return undefined;
}

/** The state stored in snapshot `file`; `undefined` when there is no such file. @throws {SnapshotProblem} */
async function fromFile(
  settings: Settings,
  file: string,
  isBackup: boolean,
): Promise<FoundSnapshot | undefined> {
  const snapshot = await readSnapshot(file);
  if (snapshot === undefined) return undefined;
  const { header } = snapshot;
  const body = checkBody(snapshot.body);
  if (body.docs.length !== header.count) {
    throw new SnapshotProblem(
      `it holds ${body.docs.length} entries but its header says ${header.count}`,
      "invalid_data",
    );
  }
  const dimensions = header.dimensions ?? undefined;
  const modelChanged =
    settings.embedModel !== undefined &&
    header.embedModel !== null &&
    header.embedModel !== settings.embedModel;
  const embedModel = settings.embedModel ?? header.embedModel;
  const savedVector = (i: number): readonly number[] | undefined => {
    const vector = body.vectors?.[i];
    if (modelChanged || dimensions === undefined || !Array.isArray(vector)) return undefined;
    if (vector.length !== dimensions || !vector.every((v) => typeof v === "number" && Number.isFinite(v))) {
      throw new SnapshotProblem(
        `the vector of entry ${JSON.stringify(body.docs[i]!.id)} is not ${dimensions} finite numbers`,
        "invalid_data",
      );
    }
    return vector;
  };
  const bytes = snapshot.bytes;
  if (header.tokenizer !== settings.tokenizer || modelChanged) {
    const positions = new Map(body.docs.map((doc, i) => [docKey(doc.scope, doc.id), i] as const));
    const state = StoreState.rebuild(
      settings.analyzer,
      body.docs,
      modelChanged ? undefined : dimensions,
      (doc) => savedVector(positions.get(docKey(doc.scope, doc.id))!),
    );
    settings.onWarning({
      code: "reindexed",
      message: modelChanged
        ? `The memory snapshot ${file} has vectors of embedding model "${header.embedModel}", not "${settings.embedModel}"; its entries are embedded again.`
        : `The memory snapshot ${file} was indexed with analyzer "${header.tokenizer}"; it was re-indexed with "${settings.tokenizer}".`,
      file,
    });
    return { state, header, embedModel, bytes, needsCompaction: true, fromBackup: isBackup };
  }
  let index: TextIndex;
  try {
    index = TextIndex.fromCompact(body);
  } catch (error) {
    throw new SnapshotProblem(`its index cannot be loaded (${(error as Error).message})`, "invalid_data", {
      cause: error,
    });
  }
  let vectors: VectorIndex | undefined;
  if (dimensions !== undefined && !modelChanged) {
    vectors = new VectorIndex(dimensions);
    body.docs.forEach((doc, i) => {
      const vector = savedVector(i);
      if (vector !== undefined) vectors!.put(docKey(doc.scope, doc.id), doc.scope, vector);
    });
  }
  return {
    state: new StoreState(settings.analyzer, index, vectors),
    header,
    embedModel,
    bytes,
    needsCompaction: false,
    fromBackup: isBackup,
  };
}

const SCOPE_PATH = /^[^/]+(\/[^/]+){0,3}$/;

function checkDoc(doc: unknown): void {
  const d = doc as Record<string, unknown>;
  const problem =
    typeof doc !== "object" || doc === null
      ? "is not an object"
      : typeof d.id !== "string" || d.id === ""
        ? 'has no string "id"'
        : typeof d.text !== "string"
          ? 'has no string "text"'
          : typeof d.scope !== "string" || !SCOPE_PATH.test(d.scope)
            ? `has an invalid scope ${JSON.stringify(d.scope)}`
            : typeof d.createdAt !== "number"
              ? 'has no numeric "createdAt"'
              : d.metadata !== undefined &&
                  (typeof d.metadata !== "object" || d.metadata === null || Array.isArray(d.metadata))
                ? "has metadata that is not an object"
                : d.source !== undefined && typeof d.source !== "string"
                  ? "has a source that is not a string"
                  : undefined;
  if (problem) {
    throw new SnapshotProblem(`an entry ${problem} (${JSON.stringify(doc)?.slice(0, 200)})`, "invalid_data");
  }
}

/** The body of a version 3 snapshot, its entries checked. @throws {SnapshotProblem} */
function checkBody(raw: unknown): SnapshotBody {
  const body = raw as Partial<Record<keyof SnapshotBody, unknown>> | null;
  if (typeof body !== "object" || body === null || !Array.isArray(body.docs)) {
    throw new SnapshotProblem("its body has no entries", "invalid_data");
  }
  const { lengths, terms, counts, sizes, postings, vectors } = body;
  if (
    !Array.isArray(lengths) ||
    !Array.isArray(terms) ||
    !terms.every((t) => typeof t === "string") ||
    !Array.isArray(counts) ||
    !Array.isArray(sizes) ||
    typeof postings !== "string" ||
    (vectors !== undefined && (!Array.isArray(vectors) || vectors.length !== body.docs.length))
  ) {
    throw new SnapshotProblem("its body has no valid index", "invalid_data");
  }
  body.docs.forEach(checkDoc);
  return body as SnapshotBody;
}

/** Entries as `StoredDoc`s of a state, for re-embedding. */
export function docsOf(state: StoreState): StoredDoc[] {
  return [...state.index.all()];
}
