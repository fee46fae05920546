// What @openrath/otel costs (issue 24): "with no SDK registered the cost is nil". Three variants of
// the same work, each in a process of its own (src/internal/otel-variant.ts), run side by side in
// alternating rounds:
//
// - `baseline`: no @openrath/otel at all;
// - `no_sdk`: `openrathTelemetry()` wired as its README says, no OpenTelemetry SDK registered;
// - `sdk`: the same with an SDK registered (context manager, TracerProvider + BatchSpanProcessor,
//   MeterProvider + periodic reader) whose exporters drop what they get.
//
// A process per variant because registering a provider is process-wide (and `openrathTracing()`
// installs a process-wide branch listener in core): a baseline or a no-SDK variant sharing the
// process of another would not be what it says. The parent sends one batch at a time, so only one
// variant works at any moment, and rotates the variants' order every round.
//
// Three workloads, each the work of another bench: `agent_loop` (agent-loop.bench.ts: ten scripted
// turns, nine tool calls, `agent.run`), `durable_chain` (durable.bench.ts's per-step case on
// embedded PGlite: a run of ten steps, submit and wait, one in-process worker) and `durable_agent`
// (journal.bench.ts's case: the same agent inside one durable step, every call journaled).
//
// Each batch is timed in the child by CPU time (user + system of the whole process over the
// batch: GC helper threads included, preemption by other processes not) and by wall time. A
// round's ratio is the variant's batch over the baseline's in that round. Targets on the median
// CPU ratio over the rounds: no SDK at most 1.02, SDK with a no-op exporter at most 1.15.
//
//   pnpm --filter @openrath/bench run bench:otel      # OPENRATH_BENCH_QUICK=1: fewer rounds
//
// One JSON line per workload on stdout; progress on stderr.
import { type ChildProcess, fork } from "node:child_process";
import { loadavg } from "node:os";
import { TURNS } from "./agent-loop/workload.js";
import { bundleInternal } from "./internal/bundle.js";
import type { Reply, Request, Variant, Workload } from "./internal/otel-variant.js";
import { emit, median, progressFor, quantile, round } from "./internal/report.js";

const progress = progressFor("otel");
const quick = process.env.OPENRATH_BENCH_QUICK === "1";
const ROUNDS = Number(process.env.OPENRATH_BENCH_ROUNDS ?? (quick ? 6 : 16));
const WARMUP_ROUNDS = quick ? 2 : 4;
/** Runs per batch: 40 to 200 ms of CPU each on two cores. */
const RUNS: Record<Workload, number> = { agent_loop: 200, durable_chain: 8, durable_agent: 8 };
/**
 * Warm-up batches are this many times longer: the agent loop takes 1,500 to 2,000 runs to reach
 * its steady speed (its first batches of 200 cost 3 to 6 times the later ones).
 */
const WARMUP_FACTOR = 3;
const VARIANTS: readonly Variant[] = ["baseline", "no_sdk", "sdk"];
const WORKLOADS: readonly Workload[] = ["agent_loop", "durable_chain", "durable_agent"];
const TARGETS: Record<Exclude<Variant, "baseline">, number> = { no_sdk: 1.02, sdk: 1.15 };

/** A forked variant process and a way to ask it one thing at a time. */
interface Child {
  readonly variant: Variant;
  readonly process: ChildProcess;
  ask(request: Request): Promise<Reply>;
  readonly ready: Promise<Reply>;
}

function spawnVariant(file: string, variant: Variant): Child {
  const child = fork(file, [variant], {
    execArgv: [],
    // The workers' info lines (start, heartbeat) would bury the progress.
    env: { ...process.env, OPENRATH_LOG_LEVEL: "warn" },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  let waiting: ((reply: Reply) => void) | undefined;
  let failed: ((error: Error) => void) | undefined;
  const ready = new Promise<Reply>((resolve, reject) => {
    waiting = resolve;
    failed = reject;
  });
  child.on("message", (reply: Reply) => {
    const resolve = waiting;
    waiting = undefined;
    if ("error" in reply) failed?.(new Error(`${variant}: ${reply.error}`));
    else resolve?.(reply);
  });
  child.on("exit", (code) => {
    if (waiting) failed?.(new Error(`${variant} exited with ${code}`));
  });
  return {
    variant,
    process: child,
    ready,
    ask: (request) =>
      new Promise<Reply>((resolve, reject) => {
        waiting = resolve;
        failed = reject;
        child.send(request);
      }),
  };
}

type Batch = Extract<Reply, { runsUs: number[] }>;

const started = performance.now();
progress(
  `node ${process.version}, ${process.platform}/${process.arch}, load average ${loadavg()[0]!.toFixed(1)}`,
);
// The variant script bundled from the packages' sources: three children start in seconds.
const bundle = await bundleInternal("otel-variant");
const children = VARIANTS.map((variant) => spawnVariant(bundle, variant));
const recording = new Map<Variant, boolean>();
let chainSteps = 0;
for (const child of children) {
  const reply = (await child.ready) as Extract<Reply, { ready: true }>;
  recording.set(child.variant, reply.recording);
  chainSteps = reply.chainSteps;
}
progress(`variants ready after ${round((performance.now() - started) / 1000, 1)} s`);
if (recording.get("no_sdk") || !recording.get("sdk"))
  throw new Error(`spans recording: ${JSON.stringify(Object.fromEntries(recording))}; expected only in sdk`);

const batches = new Map<string, Batch[]>();
const key = (variant: Variant, workload: Workload) => `${variant}/${workload}`;
const load = [loadavg()[0]!];
for (let r = 0; r < WARMUP_ROUNDS + ROUNDS; r++) {
  const measuring = r >= WARMUP_ROUNDS;
  progress(
    measuring ? `round ${r - WARMUP_ROUNDS + 1} of ${ROUNDS}` : `warm-up ${r + 1} of ${WARMUP_ROUNDS}`,
  );
  for (const workload of WORKLOADS) {
    for (let k = 0; k < children.length; k++) {
      const child = children[(r + k) % children.length]!;
      const runs = RUNS[workload] * (measuring ? 1 : WARMUP_FACTOR);
      const reply = (await child.ask({ workload, runs })) as Batch;
      if (!measuring) continue;
      const list = batches.get(key(child.variant, workload)) ?? [];
      list.push(reply);
      batches.set(key(child.variant, workload), list);
    }
  }
  load.push(loadavg()[0]!);
}
const totals = new Map<Variant, Extract<Reply, { spans: number }>>();
for (const child of children)
  totals.set(child.variant, (await child.ask({ done: true })) as Extract<Reply, { spans: number }>);

/** Median, quartiles and extremes of the per-round ratios. */
function spread(ratios: number[]) {
  return {
    median: round(median(ratios), 4),
    p25: round(quantile(ratios, 0.25), 4),
    p75: round(quantile(ratios, 0.75), 4),
    min: round(Math.min(...ratios), 4),
    max: round(Math.max(...ratios), 4),
  };
}

for (const workload of WORKLOADS) {
  const runs = RUNS[workload];
  const base = batches.get(key("baseline", workload))!;
  const perRun = (b: Batch[], field: "cpuUs" | "wallUs") => median(b.map((x) => x[field] / runs));
  const variants: Record<string, unknown> = {};
  const verdicts: Record<string, boolean> = {};
  for (const variant of VARIANTS) {
    const own = batches.get(key(variant, workload))!;
    const line: Record<string, unknown> = {
      cpu_us_per_run: round(perRun(own, "cpuUs"), 1),
      wall_us_per_run: round(perRun(own, "wallUs"), 1),
      median_run_us: round(median(own.flatMap((b) => b.runsUs)), 1),
    };
    if (variant !== "baseline") {
      const cpu = own.map((b, i) => b.cpuUs / base[i]!.cpuUs);
      const wall = own.map((b, i) => b.wallUs / base[i]!.wallUs);
      const ratio = median(cpu);
      line.cpu_ratio_to_baseline = spread(cpu);
      line.wall_ratio_to_baseline = spread(wall);
      line.added_cpu_us_per_run = round(perRun(own, "cpuUs") - perRun(base, "cpuUs"), 1);
      line.target = `median CPU ratio to baseline <= ${TARGETS[variant]}`;
      line.meets_target = ratio <= TARGETS[variant];
      verdicts[variant] = ratio <= TARGETS[variant];
    }
    variants[variant] = line;
  }
  emit({
    bench: "otel.overhead",
    case: workload,
    what:
      workload === "agent_loop"
        ? `agent.run: ${TURNS} scripted turns, ${TURNS - 1} tool calls`
        : workload === "durable_chain"
          ? `durable run of ${chainSteps} steps on embedded PGlite, submit + result`
          : `durable run of one step running the agent (${TURNS} turns, journaled) on embedded PGlite`,
    rounds: ROUNDS,
    runs_per_batch: runs,
    ...variants,
    load_average: { min: round(Math.min(...load), 1), max: round(Math.max(...load), 1) },
  });
  for (const [variant, ok] of Object.entries(verdicts))
    progress(
      `${ok ? "PASS" : "FAIL"} ${workload} ${variant}: target ${TARGETS[variant as keyof typeof TARGETS]}`,
    );
}
// The SDK variant really traced: what its exporters were handed over all its runs (warm-up included).
const sdk = totals.get("sdk")!;
emit({
  bench: "otel.overhead.sdk",
  runs: sdk.runs,
  spans_exported: sdk.spans,
  spans_per_run: round(
    sdk.spans / (sdk.runs.agent_loop + sdk.runs.durable_chain + sdk.runs.durable_agent),
    1,
  ),
  metric_exports: sdk.metricExports,
});
progress(`done in ${round((performance.now() - started) / 1000, 1)} s`);
