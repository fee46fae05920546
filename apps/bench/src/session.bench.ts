import { GCProfiler } from "node:v8";
import { type ChunkInput, Session } from "@openrath/core";
import { NaiveSession } from "./anchor/naive-session.js";
import { elapsedUs, emit, median, progressFor, quantile, round } from "./internal/report.js";

// Checks the Session cost model (DESIGN.md section 3) against the targets, each case next to
// a naive copying anchor measured in the same process. Stdout carries exactly one JSON line per
// case so the output can be piped into tools; progress goes to stderr.

/** What both the real Session and the anchor offer, so one timing loop measures either. */
interface Transcript<S> {
  readonly length: number;
  append(input: ChunkInput): S;
  fork(): S;
  merge(other: S): S;
}

const gc = globalThis.gc;
if (typeof gc !== "function") {
  process.stderr.write(
    "session.bench: gc() is not exposed, so memory cannot be measured. Run it as `pnpm bench` or with `node --expose-gc`.\n",
  );
  process.exit(1);
}

const USER: ChunkInput = { kind: "user", content: "What should the next step be?" };
const ASSISTANT: ChunkInput = {
  kind: "assistant",
  content: "Run the tests, then open the pull request.",
  model: "bench-model",
  usage: { promptTokens: 1200, completionTokens: 80, totalTokens: 1280 },
};
const turn = (i: number): ChunkInput => (i % 2 === 0 ? USER : ASSISTANT);
const progress = progressFor("session.bench");

/** Two full collections: the first can leave finalizable garbage that only the second frees. */
function collect(): void {
  gc!();
  gc!();
}

function heapUsed(): number {
  return process.memoryUsage().heapUsed;
}

function build<S extends Transcript<S>>(empty: S, chunks: number): S {
  let s = empty;
  for (let i = 0; i < chunks; i++) s = s.append(turn(i));
  return s;
}

/** Microseconds per fork for `batches` batches of `batchSize` forks, each batch timed as a whole. */
function timeForks<S extends Transcript<S>>(parent: S, batchSize: number, batches: number): number[] {
  // Preallocated so the batch measures forks, not array growth; each batch overwrites the last.
  const sink = new Array<S | undefined>(batchSize).fill(undefined);
  const perFork: number[] = [];
  for (let b = 0; b < batches; b++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < batchSize; i++) sink[i] = parent.fork();
    perFork.push(elapsedUs(start) / batchSize);
  }
  if (sink[batchSize - 1]?.length !== parent.length) throw new Error("a fork lost its chunks");
  return perFork;
}

/** Heap bytes held by `count` live forks of `parent`, beyond the parent itself. */
function forkBytes<S extends Transcript<S>>(parent: S, count: number): number {
  const keep = new Array<S | undefined>(count).fill(undefined);
  collect();
  const before = heapUsed();
  for (let i = 0; i < count; i++) keep[i] = parent.fork();
  collect();
  const bytes = heapUsed() - before;
  // Read after the second measurement, so the forks are provably alive while it is taken.
  if (keep[count - 1]?.length !== parent.length) throw new Error("a fork lost its chunks");
  return bytes;
}

interface AppendRun {
  /** Wall time of the whole run. */
  readonly ms: number;
  /** Main-thread time V8 reported spending in collections during the run. */
  readonly gcMs: number;
  readonly gcs: number;
}

/** Appends `count` chunks one at a time to an empty transcript, timing the run and its collections. */
function appendRun<S extends Transcript<S>>(empty: S, count: number): AppendRun {
  collect();
  const profiler = new GCProfiler();
  profiler.start();
  const start = process.hrtime.bigint();
  let s = empty;
  for (let i = 0; i < count; i++) s = s.append(turn(i));
  const ms = elapsedUs(start) / 1000;
  const { statistics } = profiler.stop();
  if (s.length !== count) throw new Error(`expected ${count} chunks, got ${s.length}`);
  const gcMs = statistics.reduce((sum, event) => sum + event.cost, 0) / 1000;
  return { ms, gcMs, gcs: statistics.length };
}

/** The run with the median wall time. */
function medianRun(runs: readonly AppendRun[]): AppendRun {
  return [...runs].sort((a, b) => a.ms - b.ms)[Math.floor(runs.length / 2)]!;
}

/**
 * Microseconds per merge: each batch makes `batchSize` fresh pairs of forks of `base` that each
 * append `extra` chunks (untimed), then times merging every pair once.
 */
function timeMerges<S extends Transcript<S>>(
  base: S,
  extra: number,
  batchSize: number,
  batches: number,
): { perMerge: number[]; chunks: number } {
  const branch = () => {
    let s = base.fork();
    for (let i = 0; i < extra; i++) s = s.append(turn(i));
    return s;
  };
  const left = new Array<S | undefined>(batchSize).fill(undefined);
  const right = new Array<S | undefined>(batchSize).fill(undefined);
  const merged = new Array<S | undefined>(batchSize).fill(undefined);
  const perMerge: number[] = [];
  let chunks = -1;
  for (let b = 0; b < batches; b++) {
    for (let i = 0; i < batchSize; i++) {
      left[i] = branch();
      right[i] = branch();
    }
    const start = process.hrtime.bigint();
    for (let i = 0; i < batchSize; i++) merged[i] = left[i]!.merge(right[i]!);
    perMerge.push(elapsedUs(start) / batchSize);
    for (const m of merged) {
      if (chunks !== -1 && m!.length !== chunks) throw new Error("merges of equal pairs differ in length");
      chunks = m!.length;
    }
  }
  return { perMerge, chunks };
}

const FORK_CHUNKS = 4_000;
const started = process.hrtime.bigint();
progress(`node ${process.version}, ${process.platform}/${process.arch}`);

progress(`building ${FORK_CHUNKS}-chunk sessions`);
const parent = build(Session.empty(), FORK_CHUNKS);
const anchorParent = build(NaiveSession.empty(), FORK_CHUNKS);

{
  progress("fork: warm-up");
  timeForks(parent, 1_000, 100);
  timeForks(anchorParent, 100, 20);
  progress("fork: measuring");
  const core = timeForks(parent, 1_000, 500);
  const anchor = timeForks(anchorParent, 100, 200);
  const coreMedian = median(core);
  const anchorMedian = median(anchor);
  emit({
    case: "fork",
    chunks: FORK_CHUNKS,
    batch_size: 1_000,
    batches: core.length,
    median_us: round(coreMedian),
    p10_us: round(quantile(core, 0.1)),
    p90_us: round(quantile(core, 0.9)),
    anchor_batch_size: 100,
    anchor_batches: anchor.length,
    anchor_median_us: round(anchorMedian),
    speedup_vs_anchor: round(anchorMedian / coreMedian, 1),
    target: "median fork() of a 4,000-chunk session at most 2 µs",
    meets_target: coreMedian <= 2,
  });
}

{
  const FORKS = 1_000;
  const LIMIT_BYTES = 200 * 1024;
  progress("fork_memory: measuring");
  const core = median(Array.from({ length: 7 }, () => forkBytes(parent, FORKS)));
  const anchor = median(Array.from({ length: 3 }, () => forkBytes(anchorParent, FORKS)));
  emit({
    case: "fork_memory",
    chunks: FORK_CHUNKS,
    forks: FORKS,
    bytes: core,
    kib: round(core / 1024, 1),
    bytes_per_fork: round(core / FORKS, 1),
    limit_bytes: LIMIT_BYTES,
    anchor_bytes: anchor,
    anchor_bytes_per_fork: round(anchor / FORKS, 1),
    anchor_to_core_bytes_ratio: round(anchor / core, 1),
    target: "1,000 live forks of a 4,000-chunk session hold under 200 KiB (204,800 bytes) beyond the parent",
    meets_target: core < LIMIT_BYTES,
  });
}

{
  progress("append_linear: warm-up");
  appendRun(Session.empty(), 10_000);
  appendRun(NaiveSession.empty(), 2_000);
  progress("append_linear: measuring");
  const small: AppendRun[] = [];
  const large: AppendRun[] = [];
  // Interleaved, so both sizes see the same machine conditions.
  for (let rep = 0; rep < 5; rep++) {
    small.push(appendRun(Session.empty(), 10_000));
    large.push(appendRun(Session.empty(), 100_000));
  }
  const anchorSmall: AppendRun[] = [];
  const anchorLarge: AppendRun[] = [];
  for (let rep = 0; rep < 2; rep++) {
    anchorSmall.push(appendRun(NaiveSession.empty(), 10_000));
    anchorLarge.push(appendRun(NaiveSession.empty(), 30_000));
  }
  const run10k = medianRun(small);
  const run100k = medianRun(large);
  const ratio = run100k.ms / run10k.ms;
  const anchor10k = medianRun(anchorSmall);
  const anchor30k = medianRun(anchorLarge);
  emit({
    case: "append_linear",
    ms_10k: round(run10k.ms),
    ms_100k: round(run100k.ms),
    us_per_append_10k: round((run10k.ms * 1000) / 10_000),
    us_per_append_100k: round((run100k.ms * 1000) / 100_000),
    ratio_100k_to_10k: round(ratio, 2),
    gc_ms_10k: round(run10k.gcMs),
    gc_ms_100k: round(run100k.gcMs),
    gc_count_10k: run10k.gcs,
    gc_count_100k: run100k.gcs,
    ratio_100k_to_10k_excluding_gc: round((run100k.ms - run100k.gcMs) / (run10k.ms - run10k.gcMs), 2),
    anchor_ms_10k: round(anchor10k.ms),
    anchor_ms_30k: round(anchor30k.ms),
    anchor_ratio_30k_to_10k: round(anchor30k.ms / anchor10k.ms, 2),
    speedup_vs_anchor_10k: round(anchor10k.ms / run10k.ms, 1),
    target:
      "linear: ratio near 10 for 10k → 100k appends, at most 13 (anchor uses 10k → 30k: linear 3, quadratic 9)",
    meets_target: ratio <= 13,
  });
}

{
  const EXTRA = 5;
  const expected = FORK_CHUNKS + 1 + 2 * EXTRA;
  const base = parent.append({ kind: "user", content: "One more question before we branch." });
  const anchorBase = anchorParent.append({ kind: "user", content: "One more question before we branch." });
  progress("merge_three_way: warm-up");
  timeMerges(base, EXTRA, 100, 10);
  timeMerges(anchorBase, EXTRA, 20, 5);
  progress("merge_three_way: measuring");
  const core = timeMerges(base, EXTRA, 100, 100);
  const anchor = timeMerges(anchorBase, EXTRA, 20, 50);
  const coreMedian = median(core.perMerge);
  const anchorMedian = median(anchor.perMerge);
  emit({
    case: "merge_three_way",
    base_chunks: base.length,
    appended_per_side: EXTRA,
    chunks: core.chunks,
    expected_chunks: expected,
    median_us: round(coreMedian),
    p90_us: round(quantile(core.perMerge, 0.9)),
    anchor_chunks: anchor.chunks,
    anchor_median_us: round(anchorMedian),
    speedup_vs_anchor: round(anchorMedian / coreMedian, 1),
    target: "three-way merge of two 5-chunk forks of a 4,001-chunk session gives 4,011 chunks in under 50 µs",
    meets_target: core.chunks === expected && coreMedian < 50,
  });
}

progress(`done in ${round(elapsedUs(started) / 1e6, 1)} s`);
