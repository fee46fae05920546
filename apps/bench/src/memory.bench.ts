import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { bm25Memory } from "@openrath/memory-bm25";
import MiniSearch from "minisearch";
import {
  BATCH,
  batches,
  collect,
  heapUsed,
  indexBm25,
  measurePersistence,
  measureReplay,
  REOPEN_RUNS,
  REPLAY_RUNS,
  type ReopenRun,
} from "./internal/memory-reopen.js";
import {
  MINISEARCH_OPTIONS,
  type MiniSearchDoc,
  miniSearchRecall,
  toMiniSearchDoc,
  visibleScopePaths,
} from "./internal/memory-stores.js";
import { elapsedUs, emit, median, progressFor, quantile, round } from "./internal/report.js";
import {
  ENGLISH_VOCABULARY,
  type SyntheticCorpus,
  syntheticCorpus,
  ZIPF_EXPONENT,
} from "./internal/synthetic-corpus.js";

// The bm25 memory store against MiniSearch (the anchor) on the same synthetic corpora, in the same
// process: index time and heap, recall latency (p50/p99 over 500 queries, top 10) for whole-sentence
// queries as agents send them (the last user message) and for keyword queries, reopen time (load
// from disk and answer one query: wall and CPU time, heap held), sentence recall on the reopened
// store, the disk cost of one more entry, and the reopen after a crash that left a full change log
// to replay, at 10,000 and 100,000 entries. Both sides store the entry texts and enforce the same
// scope rule. Nothing is shrunk to save time: a slow side is named in the output instead.

const progress = progressFor("memory.bench");
const gc = globalThis.gc;

const SIZES = [10_000, 100_000] as const;
const QUERIES = 500;
const WARM_UP_QUERIES = 50;
const TOP_K = 10;
const RECALL_TARGET_MS = 5;
const RECALL_P99_TARGET_MS = 20;
const REOPEN_TARGET_MS = 1_000;
/** Indexing slower than this is called out in the line's `note`. */
const SLOW_INDEX_MS = 10_000;
const ANCHOR = "minisearch 7.2.0 (default tokenizer and BM25+ scoring), same entries, same process";

/** Both sides see every entry: they are all stored at the tenant level. */
const VISIBLE = visibleScopePaths();
const ms = (us: number) => round(us / 1000, 3);
const fmt = (n: number) => n.toLocaleString("en-US");
/** The machine's 1-minute load average (the bench shares its cores with whatever else runs). */
const loadAverage = () => round(loadavg()[0]!, 2);

function indexMiniSearch(corpus: SyntheticCorpus) {
  const index = new MiniSearch<MiniSearchDoc>(MINISEARCH_OPTIONS);
  collect();
  const start = process.hrtime.bigint();
  for (const batch of batches(corpus.entries)) index.addAll(batch.map(toMiniSearchDoc));
  return { index, indexUs: elapsedUs(start) };
}

interface Latencies {
  readonly us: number[];
  withHits: number;
}

/**
 * Index time and recall latency of bm25 in memory and of the anchor, then the anchor's save to
 * `anchorFile`. Each store is only reachable from this function, so it is garbage once it returns
 * and the next phase does not pay for collecting it.
 */
async function measureInMemory(size: number, corpus: SyntheticCorpus, anchorFile: string) {
  progress(`${fmt(size)} entries: indexing bm25 (in memory)`);
  const heapBefore = heapUsed();
  const memory = await bm25Memory().open(undefined);
  const indexUs = await indexBm25(memory, corpus);
  const heapBytes = heapUsed() - heapBefore;
  progress(`${fmt(size)} entries: bm25 took ${(indexUs / 1e6).toFixed(1)} s; indexing minisearch`);
  const anchorHeapBefore = heapUsed();
  const anchor = indexMiniSearch(corpus);
  const anchorHeapBytes = heapUsed() - anchorHeapBefore;
  progress(`${fmt(size)} entries: minisearch took ${(anchor.indexUs / 1e6).toFixed(1)} s`);

  const timeQueries = async (label: string, all: readonly { text: string }[]) => {
    const warmUp = all.slice(0, WARM_UP_QUERIES);
    const queries = all.slice(WARM_UP_QUERIES);
    progress(
      `${fmt(size)} entries: ${label} recall, ${WARM_UP_QUERIES} warm-up + ${QUERIES} queries per side, interleaved`,
    );
    for (const q of warmUp) {
      await memory.recall(q.text, { topK: TOP_K });
      miniSearchRecall(anchor.index, q.text, TOP_K, VISIBLE);
    }
    const ours: Latencies = { us: [], withHits: 0 };
    const theirs: Latencies = { us: [], withHits: 0 };
    const timeOurs = async (text: string) => {
      const start = process.hrtime.bigint();
      const hits = await memory.recall(text, { topK: TOP_K });
      ours.us.push(elapsedUs(start));
      if (hits.length > 0) ours.withHits++;
    };
    const timeAnchor = (text: string) => {
      const start = process.hrtime.bigint();
      const hits = miniSearchRecall(anchor.index, text, TOP_K, VISIBLE);
      theirs.us.push(elapsedUs(start));
      if (hits.length > 0) theirs.withHits++;
    };
    for (const [i, q] of queries.entries()) {
      if (i % 2 === 0) {
        await timeOurs(q.text);
        timeAnchor(q.text);
      } else {
        timeAnchor(q.text);
        await timeOurs(q.text);
      }
    }
    return { ours, theirs };
  };
  const sentences = await timeQueries("sentence", corpus.sentences);
  const keywords = await timeQueries("keyword", corpus.queries);
  await memory.close();

  progress(`${fmt(size)} entries: saving minisearch`);
  collect();
  const start = process.hrtime.bigint();
  const json = JSON.stringify(anchor.index);
  await writeFile(anchorFile, json);
  const anchorSaveUs = elapsedUs(start);
  return {
    indexUs,
    anchorIndexUs: anchor.indexUs,
    heapBytes,
    anchorHeapBytes,
    sentences,
    keywords,
    anchorSaveUs,
    anchorSnapshotBytes: Buffer.byteLength(json),
  };
}

async function measureSize(size: number): Promise<void> {
  const started = process.hrtime.bigint();
  progress(`${fmt(size)} entries: generating the corpus`);
  const corpus = syntheticCorpus(size, WARM_UP_QUERIES + QUERIES);
  const dir = await mkdtemp(join(tmpdir(), "openrath-bench-memory-"));
  try {
    const anchorFile = join(dir, "minisearch.json");
    const live = await measureInMemory(size, corpus, anchorFile);
    const saved = await measurePersistence(corpus, join(dir, "bm25"), anchorFile, {
      progress,
      warmUpQueries: WARM_UP_QUERIES,
      topK: TOP_K,
    });
    const replay = await measureReplay(corpus, join(dir, "bm25"), { progress, topK: TOP_K });

    const slowMs = SLOW_INDEX_MS * 1000;
    const slow = [
      live.indexUs > slowMs ? `bm25 took ${(live.indexUs / 1e6).toFixed(1)} s` : undefined,
      saved.indexUs > slowMs ? `bm25 with a path took ${(saved.indexUs / 1e6).toFixed(1)} s` : undefined,
      live.anchorIndexUs > slowMs ? `minisearch took ${(live.anchorIndexUs / 1e6).toFixed(1)} s` : undefined,
    ].filter((s) => s !== undefined);
    emit({
      case: "memory_index",
      entries: size,
      tokens: corpus.tokens,
      languages: corpus.languages,
      batch: BATCH,
      ms: ms(live.indexUs),
      entries_per_s: Math.round(size / (live.indexUs / 1e6)),
      with_path_ms: ms(saved.indexUs),
      heap_mb: round(live.heapBytes / 2 ** 20, 1),
      anchor_heap_mb: round(live.anchorHeapBytes / 2 ** 20, 1),
      anchor: ANCHOR,
      anchor_ms: ms(live.anchorIndexUs),
      anchor_entries_per_s: Math.round(size / (live.anchorIndexUs / 1e6)),
      ratio_ours_to_anchor: round(live.indexUs / live.anchorIndexUs, 2),
      target: null,
      meets_target: null,
      ...(slow.length > 0
        ? {
            note: `slow indexing at ${fmt(size)} entries: ${slow.join(", ")}; the case still runs at full size`,
          }
        : {}),
    });

    const recallCase = (
      name: string,
      queries: string,
      { ours, theirs }: { ours: Latencies; theirs: Latencies },
    ) => {
      const p50 = median(ours.us) / 1000;
      const anchorP50 = median(theirs.us) / 1000;
      const p99 = quantile(ours.us, 0.99) / 1000;
      const anchorP99 = quantile(theirs.us, 0.99) / 1000;
      emit({
        case: name,
        entries: size,
        queries: QUERIES,
        query_shape: queries,
        top_k: TOP_K,
        p50_ms: round(p50),
        p90_ms: ms(quantile(ours.us, 0.9)),
        p99_ms: round(p99),
        max_ms: ms(Math.max(...ours.us)),
        queries_with_hits: ours.withHits,
        load_average: loadAverage(),
        anchor: ANCHOR,
        anchor_p50_ms: round(anchorP50),
        anchor_p90_ms: ms(quantile(theirs.us, 0.9)),
        anchor_p99_ms: round(anchorP99),
        anchor_max_ms: ms(Math.max(...theirs.us)),
        anchor_queries_with_hits: theirs.withHits,
        ratio_p50_ours_to_anchor: round(p50 / anchorP50, 2),
        ratio_p99_ours_to_anchor: round(p99 / anchorP99, 2),
        target: `p50 under ${RECALL_TARGET_MS} ms and p99 under ${RECALL_P99_TARGET_MS} ms (the issue sets it at 100,000 entries)`,
        meets_target: p50 < RECALL_TARGET_MS && p99 < RECALL_P99_TARGET_MS,
      });
    };
    recallCase(
      "memory_recall",
      "whole sentences (an agent's last user message), 10 to 25 words",
      live.sentences,
    );
    recallCase("memory_recall_keywords", "1 to 3 content words", live.keywords);

    const { ours, anchor } = saved;
    const med = (runs: readonly ReopenRun[], pick: (run: ReopenRun) => number) => median(runs.map(pick));
    const mb = (bytes: number) => round(bytes / 2 ** 20, 1);
    const reopenMs = med(ours, (r) => r.totalUs) / 1000;
    const anchorReopenMs = med(anchor, (r) => r.totalUs) / 1000;
    const reopenCpuMs = med(ours, (r) => r.cpuUs) / 1000;
    const anchorCpuMs = med(anchor, (r) => r.cpuUs) / 1000;
    emit({
      case: "memory_reopen",
      entries: size,
      runs: REOPEN_RUNS,
      snapshot_bytes: saved.snapshotBytes,
      save_ms: ms(saved.saveUs),
      reopen_ms: round(reopenMs),
      cpu_ms: round(reopenCpuMs),
      open_ms: ms(med(ours, (r) => r.openUs)),
      first_recall_ms: ms(med(ours, (r) => r.totalUs - r.openUs)),
      heap_mb: mb(med(ours, (r) => r.heapBytes)),
      array_buffers_mb: mb(med(ours, (r) => r.arrayBufferBytes)),
      reopen_runs_ms: ours.map((r) => ms(r.totalUs)),
      cpu_runs_ms: ours.map((r) => ms(r.cpuUs)),
      load_average: loadAverage(),
      anchor: `${ANCHOR}; saved as JSON.stringify + writeFile, reopened as readFile + MiniSearch.loadJSON + one search`,
      anchor_snapshot_bytes: live.anchorSnapshotBytes,
      anchor_save_ms: ms(live.anchorSaveUs),
      anchor_reopen_ms: round(anchorReopenMs),
      anchor_cpu_ms: round(anchorCpuMs),
      anchor_read_ms: ms(med(anchor, (r) => r.openUs)),
      anchor_load_ms: ms(med(anchor, (r) => r.totalUs - r.openUs)),
      anchor_heap_mb: mb(med(anchor, (r) => r.heapBytes)),
      anchor_reopen_runs_ms: anchor.map((r) => ms(r.totalUs)),
      ratio_ours_to_anchor: round(reopenMs / anchorReopenMs, 2),
      ratio_cpu_ours_to_anchor: round(reopenCpuMs / anchorCpuMs, 2),
      target: `open + first recall under ${fmt(REOPEN_TARGET_MS)} ms`,
      meets_target: reopenMs < REOPEN_TARGET_MS,
    });
    const reopenedP50 = median(saved.reopenedUs) / 1000;
    const reopenedP99 = quantile(saved.reopenedUs, 0.99) / 1000;
    emit({
      case: "memory_recall_reopened",
      entries: size,
      queries: saved.reopenedUs.length,
      query_shape: "the sentence queries of memory_recall, against a store just reopened from disk",
      top_k: TOP_K,
      p50_ms: round(reopenedP50),
      p90_ms: ms(quantile(saved.reopenedUs, 0.9)),
      p99_ms: round(reopenedP99),
      max_ms: ms(Math.max(...saved.reopenedUs)),
      heap_mb: mb(saved.reopenedHeapBytes),
      array_buffers_mb: mb(saved.reopenedArrayBufferBytes),
      anchor: null,
      target: `p50 under ${RECALL_TARGET_MS} ms and p99 under ${RECALL_P99_TARGET_MS} ms, as for memory_recall`,
      meets_target: reopenedP50 < RECALL_TARGET_MS && reopenedP99 < RECALL_P99_TARGET_MS,
    });
    emit({
      case: "memory_append_one",
      entries: size,
      ms: ms(saved.appendUs),
      log_bytes: saved.appendBytes,
      snapshot_bytes: saved.snapshotBytes,
      snapshot_rewritten: saved.snapshotRewritten,
      durability: "fsync",
      target: "one new entry costs O(entry) on disk: a change-log batch, not a snapshot rewrite",
      meets_target: !saved.snapshotRewritten && saved.appendBytes < 4096,
    });
    const replayMs = median(replay.runs.map((r) => r.totalUs)) / 1000;
    emit({
      case: "memory_reopen_after_crash",
      entries: size,
      runs: REPLAY_RUNS,
      entries_in_log: replay.entriesInLog,
      log_bytes: replay.logBytes,
      compaction_at_bytes: Math.round(replay.limitBytes),
      reopen_ms: round(replayMs),
      cpu_ms: round(median(replay.runs.map((r) => r.cpuUs)) / 1000),
      reopen_runs_ms: replay.runs.map((r) => ms(r.totalUs)),
      load_average: loadAverage(),
      anchor: null,
      target: null,
      meets_target: null,
      note: "the worst case of a reopen after kill -9: a change log just under the compaction threshold, every entry in it analyzed again; not the issue's reopen target, which is the clean reopen (memory_reopen)",
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  progress(`${fmt(size)} entries: done in ${(elapsedUs(started) / 1e6).toFixed(0)} s`);
}

if (typeof gc !== "function") {
  progress(
    "gc() is not exposed, so garbage from one phase may be collected during the next; run with --expose-gc",
  );
}
progress(
  `corpora: Zipf (exponent ${ZIPF_EXPONENT}) over ${fmt(ENGLISH_VOCABULARY)} English words plus 7 other languages, 10-40 words per entry`,
);
for (const size of SIZES) await measureSize(size);
