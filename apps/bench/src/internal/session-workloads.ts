import { GCProfiler } from "node:v8";
import type { ChunkInput } from "@openrath/core";
import { median } from "./report.js";

// Workloads and timers for the session bench, written against the few operations the real
// Session and the copying anchor both offer.

/** What both the real Session and the anchor offer, so one timing loop measures either. */
export interface Transcript<S> {
  readonly length: number;
  append(input: ChunkInput): S;
  fork(): S;
  merge(other: S): S;
}

export const USER: ChunkInput = { kind: "user", content: "What should the next step be?" };
export const ASSISTANT: ChunkInput = {
  kind: "assistant",
  content: "Run the tests, then open the pull request.",
  model: "bench-model",
  usage: { promptTokens: 1200, completionTokens: 80, totalTokens: 1280 },
};
export const SIBLING: ChunkInput = { kind: "user", content: "A sibling's turn." };
export const turn = (i: number): ChunkInput => (i % 2 === 0 ? USER : ASSISTANT);

const gc = globalThis.gc;

/**
 * This process's CPU time so far (user + system, every thread) in microseconds. The bench times
 * with it rather than the wall clock: the scheduler of a shared machine stretches long operations
 * far more than short ones.
 */
export function cpuNow(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** CPU microseconds since a {@link cpuNow} reading. */
export const cpuSince = (start: number): number => cpuNow() - start;

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Two full collections (the first can leave finalizable garbage that only the second frees), then
 * 20 ms of sleep so V8's background sweeper threads finish before anything is timed: their CPU
 * time would otherwise land in the next sample.
 */
export function collect(): void {
  gc?.();
  gc?.();
  Atomics.wait(pause, 0, 0, 20);
}

export function heapUsed(): number {
  return process.memoryUsage().heapUsed;
}

/** `chunks` turns appended one at a time to `empty`, on the tip only. */
export function build<S extends Transcript<S>>(empty: S, chunks: number): S {
  let s = empty;
  for (let i = 0; i < chunks; i++) s = s.append(turn(i));
  return s;
}

/**
 * `chunks` turns where every version was extended by a sibling before the main line grew on:
 * the history shape that made appends and merges O(n) in a structure with shared buffers.
 */
export function buildBranchy<S extends Transcript<S>>(empty: S, chunks: number): S {
  let s = empty;
  for (let i = 0; i < chunks; i++) {
    s.append(SIBLING);
    s = s.append(turn(i));
  }
  return s;
}

/** CPU microseconds per call of `op`, one sample per timed batch of `batchSize` calls. */
export function timePerOp(batchSize: number, batches: number, op: (i: number) => unknown): number[] {
  const sink = new Array<unknown>(batchSize).fill(undefined);
  const perOp: number[] = [];
  for (let b = 0; b < batches; b++) {
    const start = cpuNow();
    for (let i = 0; i < batchSize; i++) sink[i] = op(i);
    perOp.push(cpuSince(start) / batchSize);
  }
  if (sink[batchSize - 1] === undefined) throw new Error("an operation returned nothing");
  return perOp;
}

/** One timed run and what V8 reported spending in collections during it. */
export interface GcRun {
  /** CPU time of the whole run. */
  readonly ms: number;
  /** Main-thread time V8 reported spending in collections during the run (wall clock). */
  readonly gcMs: number;
  readonly gcs: number;
}

/** Runs `work` once after a forced full collection, timing it (CPU time) and its collections. */
export function gcRun(work: () => void): GcRun {
  collect();
  const profiler = new GCProfiler();
  profiler.start();
  const start = cpuNow();
  work();
  const ms = cpuSince(start) / 1000;
  const { statistics } = profiler.stop();
  const gcMs = statistics.reduce((sum, event) => sum + event.cost, 0) / 1000;
  return { ms, gcMs, gcs: statistics.length };
}

/** The run with the median time. */
export function medianRun(runs: readonly GcRun[]): GcRun {
  return [...runs].sort((a, b) => a.ms - b.ms)[Math.floor(runs.length / 2)]!;
}

/** Median of `reps` measurements of the heap bytes `make` leaves reachable through what it returns. */
export function retainedBytes(reps: number, make: () => unknown): number {
  const samples: number[] = [];
  for (let r = 0; r < reps; r++) {
    collect();
    const before = heapUsed();
    const kept = make();
    collect();
    samples.push(heapUsed() - before);
    // Read after the measurement, so what `make` returned is provably alive while it is taken.
    if (kept === undefined) throw new Error("nothing was kept");
  }
  return median(samples);
}

/**
 * `reps` samples of the heap bytes still used after `work` ran, each between two forced full
 * collections (what `work` left behind, plus V8's own noise of a few KiB either way).
 */
export function heapDeltas(reps: number, work: () => unknown): number[] {
  const samples: number[] = [];
  for (let r = 0; r < reps; r++) {
    collect();
    const before = heapUsed();
    work();
    collect();
    samples.push(heapUsed() - before);
  }
  return samples;
}

/**
 * An estimate of the bytes reachable from `root` through own properties and array elements:
 * 8 bytes a slot plus a 16-byte header per object or array, strings at 2 bytes a character.
 * Exact in what it counts (the same graph gives the same number), approximate in bytes.
 */
export function reachableBytes(root: unknown): number {
  const seen = new Set<unknown>();
  const stack: unknown[] = [root];
  let bytes = 0;
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === "string") {
      if (!seen.has(value)) {
        seen.add(value);
        bytes += 16 + 2 * value.length;
      }
      continue;
    }
    if (typeof value !== "object" || value === null || seen.has(value)) continue;
    seen.add(value);
    if (Array.isArray(value)) {
      bytes += 16 + 8 * value.length;
      for (const item of value) stack.push(item);
      continue;
    }
    const keys = Object.getOwnPropertyNames(value);
    bytes += 16 + 8 * keys.length;
    for (const key of keys) {
      const descriptor = Object.getOwnPropertyDescriptor(value, key)!;
      if ("value" in descriptor) stack.push(descriptor.value);
    }
  }
  return bytes;
}
