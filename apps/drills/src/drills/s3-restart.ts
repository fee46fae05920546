import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { bulk } from "../bulk.js";
import {
  client,
  freePort,
  type Report,
  ROOT,
  type Submitted,
  settle,
  stage,
  start,
  statuses,
  tally,
  teardown,
  until,
} from "../harness.js";

const LAUNCHER = join(ROOT, "packages", "artifacts-s3", "src", "testing", "serve-s3rver.mjs");
export const BUCKET = "openrath-drills";

/** An S3-compatible server (s3rver) of the drill's own, on a fixed port so it can come back on it. */
export class S3 {
  private child: ChildProcess | undefined;
  constructor(
    readonly dir: string,
    readonly port: number,
  ) {
    mkdirSync(dir, { recursive: true });
  }
  async start() {
    // s3rver keeps a bucket as a directory of its store.
    mkdirSync(join(this.dir, BUCKET), { recursive: true });
    this.child = spawn(process.execPath, [LAUNCHER, "--dir", this.dir, "--port", String(this.port)], {
      stdio: "ignore",
    });
    const up = await until(async () => {
      const response = await fetch(`http://127.0.0.1:${this.port}/`, { signal: AbortSignal.timeout(2000) });
      await response.body?.cancel();
      return true;
    }, 30_000);
    if (!up) throw new Error("s3rver did not answer");
  }
  /** Whether the server is running (it may have exited by itself, on a full disk say). */
  get running() {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }
  async kill() {
    const child = this.child;
    if (!child || !this.running) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
    this.child = undefined;
  }
}

/**
 * Drill 5: the S3-compatible artifact server killed and restarted (down 3 s each time) while runs
 * commit chunks of 2 MiB, which are offloaded to it. Runs must finish, and every succeeded run's
 * session must read back whole (the artifact store verifies each object against its digest).
 */
export async function s3Restart(quick: boolean): Promise<Report> {
  const restarts = quick ? 3 : 10;
  const s = await stage("s3-restart");
  const s3 = new S3(join(s.dir, "s3"), await freePort());
  await s3.start();
  Object.assign(s.env, {
    OPENRATH_S3_BUCKET: BUCKET,
    OPENRATH_S3_ENDPOINT: `http://127.0.0.1:${s3.port}`,
    AWS_ACCESS_KEY_ID: "S3RVER",
    AWS_SECRET_ACCESS_KEY: "S3RVER",
  });
  const started = new Date();
  try {
    const api = client((await start(s, "serve")).port);
    await start(s, "worker");
    await start(s, "worker");
    const runs: Submitted[] = [];
    let lastRestart = Date.now();
    let cut = 0;
    for (let r = 0; r < restarts; r++) {
      for (let i = 0; i < (quick ? 6 : 10); i++) {
        const input = `s3-${r}-${i}`;
        const run = await api.runs.create({ assistant: "bulky", input });
        runs.push({ id: run.id, workflow: "bulky", input });
      }
      await sleep(200 + Math.floor(Math.random() * 600));
      const now = await statuses(s, runs);
      cut += runs.filter((run) => now.get(run.id) === "running").length;
      await s3.kill();
      await sleep(3000);
      await s3.start();
      lastRestart = Date.now();
    }
    const settled = await settle(s, runs, 300_000);
    const recovery = settled === null ? null : (Date.now() - lastRestart) / 1000;
    const t = await tally(s, api, runs);
    let verified = 0;
    const final = await statuses(s, runs);
    for (const run of runs.filter((r) => final.get(r.id) === "succeeded")) {
      try {
        const session = await api.runs.session(run.id);
        const contents = (session.chunks as { content?: string }[]).map((chunk) => chunk.content);
        const want = [run.input, bulk(run.input, 1), bulk(run.input, 2), bulk(run.input, 3)];
        if (JSON.stringify(contents) === JSON.stringify(want)) verified++;
        else {
          t.lostRecords++;
          t.problems.push(`run ${run.id}: its session does not read back as written`);
        }
      } catch (error) {
        t.lostRecords++;
        t.problems.push(`run ${run.id}: its session does not read back (${String(error)})`);
      }
    }
    return {
      drill: "s3-restart",
      quick,
      fault: `the S3-compatible server (s3rver) killed mid-upload and restarted after 3 s, ${restarts} times`,
      start: started.toISOString(),
      end: new Date().toISOString(),
      recoverySeconds: recovery,
      ...t,
      details: {
        restarts,
        /** Runs running at each kill, summed over the kills. */
        runningAtKills: cut,
        objectsInBucket: readdirSync(join(s3.dir, BUCKET), { recursive: true }).filter((name) =>
          String(name).endsWith("._S3rver_object"),
        ).length,
        sessionsVerified: verified,
      },
      ok: recovery !== null && t.lostRecords === 0 && t.duplicatedEffects === 0,
    };
  } finally {
    await teardown(s);
    await s3.kill();
  }
}
