import { spawn } from "node:child_process";
import { loadavg } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import type { SandboxV1 } from "@openrath/core";
import { dockerSandbox } from "@openrath/sandbox-docker";
import { localSandbox } from "@openrath/sandbox-local";
import { openSandbox } from "@openrath/sandbox-opensandbox";
import Dockerode from "dockerode";
// The package's test double (not part of its published surface): labelled as such in every line.
import {
  bwrapWorks,
  type FakeOpenSandbox,
  startFakeOpenSandbox,
} from "../../../packages/sandbox-opensandbox/src/testing/fake-opensandbox.js";
import { elapsedUs, emit, median, progressFor, quantile, round } from "./internal/report.js";

// Sandbox latency per backend: a cold open + first exec("true") + close, a warm exec("true") on an
// open sandbox (after a short pause, as between an agent's commands, and back to back), each
// sample paired with a plain child_process.spawn("true") taken right after it, so the anchor sees
// the same machine conditions; and 100 parallel execs on one sandbox against 100 parallel plain
// calls of the same kind (spawns, or Docker execs made the simplest way with dockerode). A backend
// that is not available here gets one `skipped` line per case instead of numbers. Docker is
// reached the way the backend reaches it (DOCKER_HOST, else the local socket); OpenSandbox runs
// against the package's fake server (commands under bubblewrap on this machine), and its lines say
// so. Every line carries the machine's one-minute load average at its end.

const progress = progressFor("sandbox.bench");

const DOCKER_IMAGE = process.env.OPENRATH_TEST_DOCKER_IMAGE ?? "openrath-test/busybox:1";
/** Warm exec under bubblewrap against plain spawn: the target ratio. */
const BUBBLEWRAP_WARM_TARGET = 3;
const ANCHOR = 'child_process.spawn("true"), until exit';
/**
 * The pause before each paused warm sample and its anchor: a backend may prepare the next command
 * in the background (the bubblewrap spares), which then overlaps neither measurement.
 */
const SETTLE_MS = 10;
/** Execs started at once in the parallel case. */
const PARALLEL = 100;
const load = () => round(loadavg()[0]!, 2);

interface BackendUnderTest {
  readonly backend: string;
  readonly isolation: string;
  /** The warm-exec ratio to spawn this backend aims at, if any. */
  readonly warmTarget?: number;
  open(): Promise<SandboxV1>;
  readonly coldRuns: number;
  readonly warmExecs: number;
  /** The parallel case's anchor: `PARALLEL` plain calls at once, and what they are. */
  readonly parallel?: { readonly anchor: string; run(sandbox: SandboxV1): Promise<void> };
}

/** The anchor: start `true` as a child process and wait for it to exit. */
function spawnTrue(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("true");
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`true exited with ${code}`))));
  });
}

async function timeAnchor(): Promise<number> {
  const start = process.hrtime.bigint();
  await spawnTrue();
  return elapsedUs(start) / 1000;
}

async function execTrue(sandbox: SandboxV1): Promise<void> {
  const result = await sandbox.exec("true");
  if (result.exitCode !== 0) throw new Error(`exec("true") in ${sandbox.id} exited with ${result.exitCode}`);
}

interface ColdRun {
  readonly totalMs: number;
  readonly openMs: number;
  readonly execMs: number;
  readonly closeMs: number;
}

async function coldRun(subject: BackendUnderTest): Promise<ColdRun> {
  const start = process.hrtime.bigint();
  const sandbox = await subject.open();
  const opened = elapsedUs(start);
  await execTrue(sandbox);
  const executed = elapsedUs(start);
  await sandbox.close();
  const closed = elapsedUs(start);
  return {
    totalMs: closed / 1000,
    openMs: opened / 1000,
    execMs: (executed - opened) / 1000,
    closeMs: (closed - executed) / 1000,
  };
}

const ms = (value: number) => round(value, 3);

async function measureCold(subject: BackendUnderTest): Promise<void> {
  progress(`${subject.backend}/${subject.isolation} cold: warm-up`);
  for (let i = 0; i < 2; i++) {
    await coldRun(subject);
    await timeAnchor();
  }
  progress(`${subject.backend}/${subject.isolation} cold: ${subject.coldRuns} runs`);
  const runs: ColdRun[] = [];
  const anchor: number[] = [];
  for (let i = 0; i < subject.coldRuns; i++) {
    runs.push(await coldRun(subject));
    anchor.push(await timeAnchor());
  }
  const total = runs.map((r) => r.totalMs);
  const anchorMedian = median(anchor);
  emit({
    case: "sandbox_cold",
    backend: subject.backend,
    isolation: subject.isolation,
    runs: runs.length,
    median_ms: ms(median(total)),
    p10_ms: ms(quantile(total, 0.1)),
    p90_ms: ms(quantile(total, 0.9)),
    open_median_ms: ms(median(runs.map((r) => r.openMs))),
    first_exec_median_ms: ms(median(runs.map((r) => r.execMs))),
    close_median_ms: ms(median(runs.map((r) => r.closeMs))),
    anchor: ANCHOR,
    anchor_median_ms: ms(anchorMedian),
    ratio_to_anchor: round(median(total) / anchorMedian, 1),
    target: null,
    meets_target: null,
    load_avg_1m: load(),
  });
}

interface WarmSeries {
  readonly execs: number[];
  readonly anchor: number[];
}

async function warmSeries(sandbox: SandboxV1, count: number, pause: number): Promise<WarmSeries> {
  const execs: number[] = [];
  const anchor: number[] = [];
  for (let i = 0; i < count; i++) {
    if (pause > 0) await sleep(pause);
    const start = process.hrtime.bigint();
    await execTrue(sandbox);
    execs.push(elapsedUs(start) / 1000);
    if (pause > 0) await sleep(pause);
    anchor.push(await timeAnchor());
  }
  return { execs, anchor };
}

function emitWarm(subject: BackendUnderTest, name: string, series: WarmSeries, pause: number | null): void {
  const execMedian = median(series.execs);
  const anchorMedian = median(series.anchor);
  const target = name === "sandbox_warm_exec" ? subject.warmTarget : undefined;
  emit({
    case: name,
    backend: subject.backend,
    isolation: subject.isolation,
    execs: series.execs.length,
    ...(pause === null ? {} : { pause_ms: pause }),
    median_ms: ms(execMedian),
    p10_ms: ms(quantile(series.execs, 0.1)),
    p90_ms: ms(quantile(series.execs, 0.9)),
    anchor: ANCHOR,
    anchor_median_ms: ms(anchorMedian),
    ratio_to_anchor: round(execMedian / anchorMedian, 2),
    overhead_over_anchor_ms: ms(execMedian - anchorMedian),
    target: target ?? null,
    meets_target: target === undefined ? null : execMedian / anchorMedian <= target,
    load_avg_1m: load(),
  });
}

async function measureWarm(subject: BackendUnderTest): Promise<void> {
  const sandbox = await subject.open();
  try {
    progress(`${subject.backend}/${subject.isolation} warm: warm-up`);
    await warmSeries(sandbox, 10, SETTLE_MS);
    progress(`${subject.backend}/${subject.isolation} warm: ${subject.warmExecs} execs after a pause`);
    emitWarm(
      subject,
      "sandbox_warm_exec",
      await warmSeries(sandbox, subject.warmExecs, SETTLE_MS),
      SETTLE_MS,
    );
    progress(`${subject.backend}/${subject.isolation} warm: ${subject.warmExecs} execs back to back`);
    emitWarm(
      subject,
      "sandbox_warm_exec_back_to_back",
      await warmSeries(sandbox, subject.warmExecs, 0),
      null,
    );
    if (subject.parallel) await measureParallel(subject, subject.parallel, sandbox);
  } finally {
    await sandbox.close();
  }
}

/** `PARALLEL` execs at once on one sandbox, against `PARALLEL` plain calls at once, in alternating rounds. */
async function measureParallel(
  subject: BackendUnderTest,
  parallel: NonNullable<BackendUnderTest["parallel"]>,
  sandbox: SandboxV1,
): Promise<void> {
  const rounds = 3;
  const time = async (run: () => Promise<unknown>) => {
    const start = process.hrtime.bigint();
    await run();
    return elapsedUs(start) / 1000;
  };
  const all = () => Promise.all(Array.from({ length: PARALLEL }, () => execTrue(sandbox)));
  progress(`${subject.backend}/${subject.isolation} parallel: warm-up`);
  await all();
  await parallel.run(sandbox);
  progress(`${subject.backend}/${subject.isolation} parallel: ${rounds} rounds of ${PARALLEL}`);
  const ours: number[] = [];
  const anchor: number[] = [];
  for (let i = 0; i < rounds; i++) {
    ours.push(await time(all));
    anchor.push(await time(() => parallel.run(sandbox)));
  }
  const oursMedian = median(ours);
  const anchorMedian = median(anchor);
  emit({
    case: "sandbox_parallel_exec",
    backend: subject.backend,
    isolation: subject.isolation,
    parallel: PARALLEL,
    rounds,
    median_ms: ms(oursMedian),
    execs_per_s: round((PARALLEL * 1000) / oursMedian, 1),
    anchor: parallel.anchor,
    anchor_median_ms: ms(anchorMedian),
    ratio_to_anchor: round(oursMedian / anchorMedian, 2),
    target: null,
    meets_target: null,
    load_avg_1m: load(),
  });
}

/** `PARALLEL` plain spawns of `true` at once. */
async function parallelSpawns(): Promise<void> {
  await Promise.all(Array.from({ length: PARALLEL }, () => spawnTrue()));
}

/**
 * `PARALLEL` Docker execs of `true` at once in the sandbox's container, the simplest way with
 * dockerode: create, start with the output attached, wait for the stream to end, inspect.
 */
async function parallelDockerExecs(client: Dockerode, sandbox: SandboxV1): Promise<void> {
  const container = client.getContainer(sandbox.id);
  const one = async () => {
    const exec = await container.exec({ Cmd: ["true"], AttachStdout: true, AttachStderr: true });
    const stream = await exec.start({ hijack: true, stdin: false });
    await new Promise<void>((resolve, reject) => {
      stream.on("end", resolve);
      stream.on("close", resolve);
      stream.on("error", reject);
      stream.resume();
    });
    for (;;) {
      const info = await exec.inspect();
      if (!info.Running) {
        if (info.ExitCode !== 0) throw new Error(`docker exec true exited with ${info.ExitCode}`);
        return;
      }
      await sleep(5);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, one));
}

function skip(subject: BackendUnderTest, reason: string): void {
  const { backend, isolation } = subject;
  progress(`${backend}/${isolation}: skipped (${reason})`);
  const cases = ["sandbox_cold", "sandbox_warm_exec", "sandbox_warm_exec_back_to_back"];
  if (subject.parallel) cases.push("sandbox_parallel_exec");
  for (const name of cases) emit({ case: name, backend, isolation, skipped: reason });
}

/** Opens, execs and closes once; the error's message when that fails, so the backend is skipped. */
async function probe(subject: BackendUnderTest): Promise<string | undefined> {
  try {
    await coldRun(subject);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

const started = process.hrtime.bigint();
progress(`node ${process.version}, ${process.platform}/${process.arch}`);

const plain = localSandbox();
const isolated = localSandbox({ isolation: "bubblewrap" });
// The backend's own default: DOCKER_HOST, else the local socket.
const docker = dockerSandbox({ labels: { "openrath-bench": "sandbox" } });
// The parallel case's anchor talks to the same daemon (dockerode reads DOCKER_HOST the same way).
const dockerClient = new Dockerode();
let fake: FakeOpenSandbox | undefined;
const remote = () => openSandbox({ domain: fake!.domain, readyTimeoutMs: 20_000 });

const subjects: (BackendUnderTest & { unavailable(): Promise<string | undefined> })[] = [
  {
    backend: "local",
    isolation: "none",
    open: () => plain.open(plain.parseSpec!(undefined)),
    coldRuns: 20,
    warmExecs: 200,
    parallel: { anchor: `${PARALLEL} x ${ANCHOR}, at once`, run: parallelSpawns },
    unavailable: async () => undefined,
  },
  {
    backend: "local",
    isolation: "bubblewrap",
    open: () => isolated.open(isolated.parseSpec!(undefined)),
    coldRuns: 20,
    warmExecs: 200,
    warmTarget: BUBBLEWRAP_WARM_TARGET,
    parallel: { anchor: `${PARALLEL} x ${ANCHOR}, at once`, run: parallelSpawns },
    unavailable: async () => undefined,
  },
  {
    backend: "docker",
    isolation: "container",
    open: () => docker.open(docker.parseSpec!({ image: DOCKER_IMAGE })),
    coldRuns: 12,
    warmExecs: 100,
    parallel: {
      anchor: `${PARALLEL} x dockerode exec of true (create, start, stream end, inspect), at once`,
      run: (sandbox) => parallelDockerExecs(dockerClient, sandbox),
    },
    // Whether a daemon answers and has the image: the probe run (open, exec, close) finds out.
    unavailable: async () => undefined,
  },
  {
    backend: "opensandbox (fake server, bubblewrap)",
    isolation: "remote",
    open: () => remote().open(undefined),
    coldRuns: 8,
    warmExecs: 60,
    unavailable: async () => {
      if (!bwrapWorks()) return "bubblewrap is not usable here (the fake server runs commands under it)";
      fake ??= await startFakeOpenSandbox({ createState: "Running" });
      return undefined;
    },
  },
];

for (const subject of subjects) {
  const reason = (await subject.unavailable()) ?? (await probe(subject));
  if (reason !== undefined) {
    skip(subject, reason);
    continue;
  }
  await measureCold(subject);
  await measureWarm(subject);
}

await fake?.close();
progress(`done in ${round(elapsedUs(started) / 1e6, 1)} s`);
