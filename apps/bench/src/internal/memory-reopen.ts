// The on-disk half of the memory bench: bm25 with a path is indexed, closed (which compacts the
// change log into the snapshot), reopened several times beside the anchor's reload, queried once
// reopened, and given one more entry. Each reopen is measured in wall time, in CPU time of the
// whole process (every thread: the main thread, the garbage collector's helpers and the file
// system threads), and in the heap and array-buffer bytes the reopened store holds.

import { cp, readdir, readFile, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { MemoryV1 } from "@openrath/core";
import { bm25Memory } from "@openrath/memory-bm25";
import MiniSearch from "minisearch";
import {
  MINISEARCH_OPTIONS,
  type MiniSearchDoc,
  miniSearchRecall,
  visibleScopePaths,
} from "./memory-stores.js";
import { elapsedUs } from "./report.js";
import { type CorpusEntry, type SyntheticCorpus, syntheticCorpus } from "./synthetic-corpus.js";

/** Entries per `remember` call while indexing. */
export const BATCH = 1_000;
/** Reopens per side; the lines report medians. */
export const REOPEN_RUNS = 7;

const gc = globalThis.gc;

/** Two full collections (with `--expose-gc`), so a measurement starts without earlier garbage. */
export function collect(): void {
  gc?.();
  gc?.();
}

/** Heap in use after a full collection, in bytes. */
export function heapUsed(): number {
  collect();
  return process.memoryUsage().heapUsed;
}

export function batches(entries: readonly CorpusEntry[]): CorpusEntry[][] {
  const out: CorpusEntry[][] = [];
  for (let i = 0; i < entries.length; i += BATCH) out.push(entries.slice(i, i + BATCH));
  return out;
}

/** Remembers the corpus in batches; returns the wall time in microseconds. */
export async function indexBm25(memory: MemoryV1, corpus: SyntheticCorpus): Promise<number> {
  collect();
  const start = process.hrtime.bigint();
  for (const batch of batches(corpus.entries)) {
    await memory.remember(batch.map((e) => ({ id: e.id, text: e.text })));
  }
  return elapsedUs(start);
}

/** One reopen, in microseconds and bytes. */
export interface ReopenRun {
  /** Open, then the first recall (or the anchor's read, load and first search). */
  readonly totalUs: number;
  /** CPU time of the process over the same span, user plus system. */
  readonly cpuUs: number;
  /** The first part of `totalUs`: the open (the anchor: reading the file). */
  readonly openUs: number;
  /** Heap held by the reopened store after a full collection. */
  readonly heapBytes: number;
  /** Array-buffer bytes (outside the heap) held by the reopened store. */
  readonly arrayBufferBytes: number;
}

/** Times `open` then `first` (each side's first query), and what the opened store holds. */
async function measureReopen<T>(
  open: () => Promise<T>,
  first: (opened: T) => Promise<number>,
  close: (opened: T) => Promise<void>,
): Promise<ReopenRun> {
  collect();
  const before = process.memoryUsage();
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  const opened = await open();
  const openUs = elapsedUs(start);
  const hits = await first(opened);
  const totalUs = elapsedUs(start);
  const used = process.cpuUsage(cpu);
  if (hits === 0) throw new Error("a reopened store found nothing for the probe query");
  collect();
  const after = process.memoryUsage();
  await close(opened);
  return {
    totalUs,
    cpuUs: used.user + used.system,
    openUs,
    heapBytes: after.heapUsed - before.heapUsed,
    arrayBufferBytes: after.arrayBuffers - before.arrayBuffers,
  };
}

/** Settings of {@link measurePersistence}. */
export interface PersistenceOptions {
  readonly progress: (message: string) => void;
  readonly warmUpQueries: number;
  readonly topK: number;
}

/**
 * bm25 with a path: index time, save (close), then {@link REOPEN_RUNS} reopens (open + one
 * recall), each paired with a reopen of the anchor's file (read + loadJSON + one search); then the
 * sentence queries against a reopened store (as the in-memory case runs them: warm-up, then timed),
 * its heap after them, and the disk cost of one more entry.
 */
export async function measurePersistence(
  corpus: SyntheticCorpus,
  storeDir: string,
  anchorFile: string,
  { progress, warmUpQueries, topK }: PersistenceOptions,
) {
  const size = corpus.entries.length;
  const fmt = size.toLocaleString("en-US");
  const backend = bm25Memory();
  const probe = corpus.queries[warmUpQueries]!.text;
  const visible = visibleScopePaths();
  progress(`${fmt} entries: indexing bm25 with a path`);
  let indexUs: number;
  let saveUs: number;
  {
    const memory = await backend.open({ path: storeDir });
    indexUs = await indexBm25(memory, corpus);
    progress(`${fmt} entries: bm25 with a path took ${(indexUs / 1e6).toFixed(1)} s; saving it`);
    collect();
    const start = process.hrtime.bigint();
    await memory.close();
    saveUs = elapsedUs(start);
  }
  const snapshotBytes = (await stat(join(storeDir, "memory.json"))).size;

  const ours: ReopenRun[] = [];
  const anchor: ReopenRun[] = [];
  const reopenOurs = async () =>
    ours.push(
      await measureReopen(
        () => backend.open({ path: storeDir }),
        async (memory) => (await memory.recall(probe, { topK })).length,
        (memory) => memory.close(),
      ),
    );
  const reopenAnchor = async () =>
    anchor.push(
      await measureReopen(
        async () => readFile(anchorFile, "utf8"),
        async (text) =>
          miniSearchRecall(MiniSearch.loadJSON<MiniSearchDoc>(text, MINISEARCH_OPTIONS), probe, topK, visible)
            .length,
        async () => {},
      ),
    );
  for (let run = 0; run < REOPEN_RUNS; run++) {
    progress(`${fmt} entries: reopen ${run + 1}/${REOPEN_RUNS}`);
    if (run % 2 === 0) {
      await reopenOurs();
      await reopenAnchor();
    } else {
      await reopenAnchor();
      await reopenOurs();
    }
  }

  // A reopened store answering the sentence queries: the postings it needs are decoded as they
  // are first used, and the hits' entries are read from the snapshot.
  progress(`${fmt} entries: sentence recall on a reopened store`);
  collect();
  const heapBefore = process.memoryUsage();
  const memory = await backend.open({ path: storeDir });
  const reopenedUs: number[] = [];
  for (const [i, q] of corpus.sentences.entries()) {
    const start = process.hrtime.bigint();
    await memory.recall(q.text, { topK });
    if (i >= warmUpQueries) reopenedUs.push(elapsedUs(start));
  }
  collect();
  const heapAfter = process.memoryUsage();

  // One more entry in the full store: what it costs on disk (the change log, not the snapshot).
  const logBefore = await logBytes(storeDir);
  const snapshotBefore = (await stat(join(storeDir, "memory.json"))).mtimeMs;
  const started = process.hrtime.bigint();
  await memory.remember({
    text: "One more entry after the store was full: the courier comes on Wednesdays.",
  });
  const appendUs = elapsedUs(started);
  const appendBytes = (await logBytes(storeDir)) - logBefore;
  const snapshotRewritten = (await stat(join(storeDir, "memory.json"))).mtimeMs !== snapshotBefore;
  await memory.close();
  return {
    indexUs,
    saveUs,
    snapshotBytes,
    ours,
    anchor,
    reopenedUs,
    reopenedHeapBytes: heapAfter.heapUsed - heapBefore.heapUsed,
    reopenedArrayBufferBytes: heapAfter.arrayBuffers - heapBefore.arrayBuffers,
    appendUs,
    appendBytes,
    snapshotRewritten,
  };
}

/** The default `compactLogBytes` of bm25 and the share of the snapshot that also bounds the log. */
const COMPACT_LOG_BYTES = 4 * 1024 * 1024;
const COMPACT_SNAPSHOT_SHARE = 1 / 8;
/** The log is filled to this share of what triggers a compaction. */
const LOG_FILL = 0.9;
/** Reopens of the crashed store. */
export const REPLAY_RUNS = 3;

/**
 * The reopen after a crash, at its worst: the saved store at `storeDir` gets more entries (new
 * ones, in calls of 500) until its change log is just under what triggers a compaction, as a kill -9
 * right before one leaves it; its directory is copied while the store is open (every batch is
 * fsynced) and the copy opened {@link REPLAY_RUNS} times, each from a fresh copy: the open replays
 * the log, analyzing every entry in it again.
 */
export async function measureReplay(
  corpus: SyntheticCorpus,
  storeDir: string,
  { progress, topK }: Pick<PersistenceOptions, "progress" | "topK">,
) {
  const size = corpus.entries.length;
  const fmt = size.toLocaleString("en-US");
  const backend = bm25Memory();
  const snapshotBytes = (await stat(join(storeDir, "memory.json"))).size;
  const limit = Math.max(COMPACT_LOG_BYTES, snapshotBytes * COMPACT_SNAPSHOT_SHARE) * LOG_FILL;
  const extra = syntheticCorpus(Math.ceil(limit / 150), 1, 7_777).entries;
  progress(`${fmt} entries: filling the change log to ${(limit / 2 ** 20).toFixed(1)} MiB`);
  const memory = await backend.open({ path: storeDir });
  const crashed = `${storeDir}-crashed`;
  let added = 0;
  try {
    const logged = () => currentLogBytes(storeDir);
    while (added < extra.length && (await logged()) < limit) {
      const batch = extra.slice(added, added + 500);
      await memory.remember(batch.map((e) => ({ id: `late-${e.id}`, text: e.text })));
      added += batch.length;
    }
    const logBytesAtCrash = await logged();
    const probe = extra[0]!.words.slice(0, 2).join(" ");
    const runs: { totalUs: number; cpuUs: number }[] = [];
    for (let run = 0; run < REPLAY_RUNS; run++) {
      progress(`${fmt} entries: reopen after a crash ${run + 1}/${REPLAY_RUNS}`);
      await rm(crashed, { recursive: true, force: true });
      await cp(storeDir, crashed, { recursive: true });
      // The copy is not held by this process: its lock file named the store that is still open.
      await rm(join(crashed, "memory.lock"), { force: true });
      collect();
      const cpu = process.cpuUsage();
      const start = process.hrtime.bigint();
      const reopened = await backend.open({ path: crashed });
      const hits = await reopened.recall(probe, { topK });
      const totalUs = elapsedUs(start);
      const used = process.cpuUsage(cpu);
      if (hits.length === 0) throw new Error(`the crashed store found nothing for ${JSON.stringify(probe)}`);
      runs.push({ totalUs, cpuUs: used.user + used.system });
      await reopened.close();
    }
    return { entriesInLog: added, logBytes: logBytesAtCrash, limitBytes: limit / LOG_FILL, runs };
  } finally {
    await memory.close();
    await rm(crashed, { recursive: true, force: true });
  }
}

/** Bytes of the newest change-log generation of a bm25 store directory (the one an open replays). */
async function currentLogBytes(dir: string): Promise<number> {
  const generations = (await readdir(dir))
    .map((name) => /^memory-(\d+)\.log$/.exec(name)?.[1])
    .filter((g) => g !== undefined)
    .map(Number);
  if (generations.length === 0) return 0;
  return (await stat(join(dir, `memory-${Math.max(...generations)}.log`))).size;
}

/** Bytes of the change-log files of a bm25 store directory. */
async function logBytes(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir))
    if (name.endsWith(".log")) total += (await stat(join(dir, name))).size;
  return total;
}
