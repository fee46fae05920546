import { setTimeout as sleep } from "node:timers/promises";
import {
  client,
  kill9,
  type Proc,
  type Report,
  type Submitted,
  settle,
  stage,
  start,
  statuses,
  submitBatch,
  tally,
  teardown,
} from "../harness.js";

/**
 * Drill 1: `kill -9` of a worker, over and over while a batch runs. Two workers share the queue;
 * each kill takes a random one down mid-step and starts its replacement. Runs are topped up so
 * there is always work in flight to cut.
 */
export async function killWorker(quick: boolean): Promise<Report> {
  const kills = quick ? 20 : 200;
  const inFlight = quick ? 6 : 12;
  const s = await stage("kill-worker");
  const started = new Date();
  try {
    const api = client((await start(s, "serve")).port);
    const workers: Proc[] = [await start(s, "worker"), await start(s, "worker")];
    const runs: Submitted[] = [];
    let made = 0;
    let cut = 0;
    let lastKill = Date.now();
    while (made < kills) {
      const seen = await statuses(s, runs);
      const open = runs.filter((run) => ["queued", "running"].includes(seen.get(run.id) ?? "queued")).length;
      if (open < inFlight) runs.push(...(await submitBatch(api, "kill", inFlight - open)));
      await sleep(400 + Math.floor(Math.random() * 800));
      const victim = Math.floor(Math.random() * workers.length);
      const before = await statuses(s, runs);
      cut += runs.filter((run) => before.get(run.id) === "running").length;
      await kill9(workers[victim] as Proc);
      lastKill = Date.now();
      made++;
      workers[victim] = await start(s, "worker");
    }
    const settled = await settle(s, runs, 300_000);
    // From the last kill (its replacement's start-up included) to every run finished or parked.
    const recovery = settled === null ? null : (Date.now() - lastKill) / 1000;
    const t = await tally(s, api, runs);
    return {
      drill: "kill-worker",
      quick,
      fault: `kill -9 of a worker, ${kills} times over the batch (2 workers, lease 1.5 s)`,
      start: started.toISOString(),
      end: new Date().toISOString(),
      recoverySeconds: recovery,
      ...t,
      details: { kills: made, runningAtKills: cut, workers: 2, concurrency: 4 },
      ok: recovery !== null && t.lostRecords === 0 && t.duplicatedEffects === 0,
    };
  } finally {
    await teardown(s);
  }
}
