import { spawn } from "node:child_process";
import type { SandboxV1 } from "@openrath/core";
import { dockerSandbox } from "@openrath/sandbox-docker";
import { localSandbox } from "@openrath/sandbox-local";
import { openSandbox } from "@openrath/sandbox-opensandbox";
// The package's test double (not part of its published surface): labelled as such in every line.
import {
  bwrapWorks,
  type FakeOpenSandbox,
  startFakeOpenSandbox,
} from "../../../packages/sandbox-opensandbox/src/testing/fake-opensandbox.js";
import { elapsedUs, emit, median, progressFor, quantile, round } from "./internal/report.js";

// Sandbox latency per backend: a cold open + first exec("true") + close, and a warm exec("true") on
// an open sandbox, each sample paired with a plain child_process.spawn("true") taken right after
// it, so the anchor sees the same machine conditions. A backend that is not available here gets
// one `skipped` line per case instead of numbers. Docker is reached the way the backend reaches
// it (DOCKER_HOST, else the local socket); OpenSandbox runs against the package's fake server
// (commands under bubblewrap on this machine), and its lines say so.

const progress = progressFor("sandbox.bench");

const DOCKER_IMAGE = process.env.OPENRATH_TEST_DOCKER_IMAGE ?? "openrath-test/busybox:1";
/** Warm exec under bubblewrap against plain spawn: the target ratio. */
const BUBBLEWRAP_WARM_TARGET = 3;
const ANCHOR = 'child_process.spawn("true"), until exit';

interface BackendUnderTest {
  readonly backend: string;
  readonly isolation: string;
  /** The warm-exec ratio to spawn this backend aims at, if any. */
  readonly warmTarget?: number;
  open(): Promise<SandboxV1>;
  readonly coldRuns: number;
  readonly warmExecs: number;
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
  });
}

async function measureWarm(subject: BackendUnderTest): Promise<void> {
  const sandbox = await subject.open();
  try {
    progress(`${subject.backend}/${subject.isolation} warm: warm-up`);
    for (let i = 0; i < 10; i++) {
      await execTrue(sandbox);
      await timeAnchor();
    }
    progress(`${subject.backend}/${subject.isolation} warm: ${subject.warmExecs} execs`);
    const execs: number[] = [];
    const anchor: number[] = [];
    for (let i = 0; i < subject.warmExecs; i++) {
      const start = process.hrtime.bigint();
      await execTrue(sandbox);
      execs.push(elapsedUs(start) / 1000);
      anchor.push(await timeAnchor());
    }
    const execMedian = median(execs);
    const anchorMedian = median(anchor);
    emit({
      case: "sandbox_warm_exec",
      backend: subject.backend,
      isolation: subject.isolation,
      execs: execs.length,
      median_ms: ms(execMedian),
      p10_ms: ms(quantile(execs, 0.1)),
      p90_ms: ms(quantile(execs, 0.9)),
      anchor: ANCHOR,
      anchor_median_ms: ms(anchorMedian),
      ratio_to_anchor: round(execMedian / anchorMedian, 2),
      overhead_over_anchor_ms: ms(execMedian - anchorMedian),
      target: subject.warmTarget ?? null,
      meets_target: subject.warmTarget === undefined ? null : execMedian / anchorMedian <= subject.warmTarget,
    });
  } finally {
    await sandbox.close();
  }
}

function skip(backend: string, isolation: string, reason: string): void {
  progress(`${backend}/${isolation}: skipped (${reason})`);
  for (const name of ["sandbox_cold", "sandbox_warm_exec"]) {
    emit({ case: name, backend, isolation, skipped: reason });
  }
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
let fake: FakeOpenSandbox | undefined;
const remote = () => openSandbox({ domain: fake!.domain, readyTimeoutMs: 20_000 });

const subjects: (BackendUnderTest & { unavailable(): Promise<string | undefined> })[] = [
  {
    backend: "local",
    isolation: "none",
    open: () => plain.open(plain.parseSpec!(undefined)),
    coldRuns: 20,
    warmExecs: 200,
    unavailable: async () => undefined,
  },
  {
    backend: "local",
    isolation: "bubblewrap",
    open: () => isolated.open(isolated.parseSpec!(undefined)),
    coldRuns: 20,
    warmExecs: 200,
    warmTarget: BUBBLEWRAP_WARM_TARGET,
    unavailable: async () => undefined,
  },
  {
    backend: "docker",
    isolation: "container",
    open: () => docker.open(docker.parseSpec!({ image: DOCKER_IMAGE })),
    coldRuns: 12,
    warmExecs: 100,
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
    skip(subject.backend, subject.isolation, reason);
    continue;
  }
  await measureCold(subject);
  await measureWarm(subject);
}

await fake?.close();
progress(`done in ${round(elapsedUs(started) / 1e6, 1)} s`);
