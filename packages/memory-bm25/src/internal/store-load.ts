import { rename } from "node:fs/promises";
import { MemoryError } from "@openrath/core";
import { logGenerations, readLog } from "./change-log.js";
import type { Settings } from "./settings.js";
import { readSnapshot } from "./snapshot-file.js";
import { type Snapshot, SnapshotProblem } from "./snapshot-format.js";
import { readPackedIndex } from "./snapshot-layout.js";
import { StoreState } from "./store-state.js";
import { docKey, TextIndex } from "./text-index.js";
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
  const { index: packed, vectors: rows } = readPackedIndex(snapshot);
  const dimensions = header.dimensions ?? undefined;
  const modelChanged =
    settings.embedModel !== undefined &&
    header.embedModel !== null &&
    header.embedModel !== settings.embedModel;
  const embedModel = settings.embedModel ?? header.embedModel;
  let index: TextIndex;
  try {
    index = TextIndex.fromPacked(packed);
  } catch (error) {
    throw new SnapshotProblem(`its index cannot be loaded (${(error as Error).message})`, "invalid_data", {
      cause: error,
    });
  }
  /** The saved vector of entry `i` (a row of NaN: none). */
  const savedVector = (i: number): readonly number[] | undefined => {
    if (modelChanged || dimensions === undefined || rows === undefined) return undefined;
    const row = rows.subarray(i * dimensions, (i + 1) * dimensions);
    if (Number.isNaN(row[0])) return undefined;
    if (!row.every(Number.isFinite)) {
      throw new SnapshotProblem(
        `the vector of entry ${JSON.stringify(packed.docs.ids.get(i))} is not ${dimensions} finite numbers`,
        "invalid_data",
      );
    }
    return Array.from(row);
  };
  const bytes = snapshot.bytes;
  if (header.tokenizer !== settings.tokenizer || modelChanged) {
    const state = StoreState.rebuild(
      settings.analyzer,
      index.all(),
      modelChanged ? undefined : dimensions,
      (_, i) => savedVector(i),
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
  let vectors: VectorIndex | undefined;
  if (dimensions !== undefined && !modelChanged) {
    vectors = new VectorIndex(dimensions);
    const { docs } = packed;
    for (let i = 0; i < docs.count; i++) {
      const vector = savedVector(i);
      if (vector !== undefined) {
        const scope = docs.scopes[docs.scopeOf[i]!]!;
        vectors.put(docKey(scope, docs.ids.get(i)), scope, vector);
      }
    }
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
