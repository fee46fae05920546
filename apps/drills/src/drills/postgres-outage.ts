import { setTimeout as sleep } from "node:timers/promises";
import {
  client,
  type Proc,
  type Report,
  type Stage,
  settle,
  stage,
  start,
  statuses,
  submitBatch,
  tally,
  teardown,
  until,
} from "../harness.js";

/** The readiness status code of the API process, or 0 when it does not answer. */
async function readiness(port: number): Promise<number> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/health/ready`, {
      signal: AbortSignal.timeout(3000),
    });
    await response.body?.cancel();
    return response.status;
  } catch {
    return 0;
  }
}

/** Restarts, as a supervisor would, the processes that exited; the names of those it restarted. */
async function supervise(s: Stage, procs: { role: "serve" | "worker"; proc: Proc }[]) {
  const restarted: string[] = [];
  for (const entry of procs) {
    if (entry.proc.child.exitCode !== null || entry.proc.child.signalCode !== null) {
      restarted.push(`${entry.role} (exit ${entry.proc.child.exitCode ?? entry.proc.child.signalCode})`);
      entry.proc = await start(s, entry.role);
    }
  }
  return restarted;
}

/**
 * Drill 3: PostgreSQL stopped for 30 s (10 s quick) under a batch in flight. While it is down the
 * API's readiness must be 503, a new run is refused with a coded error, and no run the store did
 * not finish is reported succeeded; once it is back every run finishes.
 */
export async function postgresOutage(quick: boolean): Promise<Report> {
  const outageMs = quick ? 10_000 : 30_000;
  const s = await stage("postgres-outage");
  const started = new Date();
  try {
    const serve = await start(s, "serve");
    const api = client(serve.port);
    const procs = [
      { role: "serve" as const, proc: serve },
      { role: "worker" as const, proc: await start(s, "worker") },
      { role: "worker" as const, proc: await start(s, "worker") },
    ];
    const runs = await submitBatch(api, "pg", quick ? 24 : 72);
    await sleep(1500);

    const before = await statuses(s, runs);
    const inFlight = runs.filter((run) => before.get(run.id) === "running").length;
    const queued = runs.filter((run) => before.get(run.id) === "queued").length;
    const downAt = Date.now();
    s.postgres.stop();
    const ready = new Map<number, number>();
    const refusals = new Map<string, number>();
    const succeededDuringOutage = new Set<string>();
    let probes = 0;
    while (Date.now() - downAt < outageMs) {
      const code = await readiness(procs[0]?.proc.port ?? 0);
      ready.set(code, (ready.get(code) ?? 0) + 1);
      try {
        await api.runs.create({ assistant: "ledger", input: `during-outage-${probes}` });
        refusals.set("accepted", (refusals.get("accepted") ?? 0) + 1);
      } catch (error) {
        const e = error as { status?: number; code?: string };
        const key = `${e.status ?? "?"} ${e.code ?? String(error)}`;
        refusals.set(key, (refusals.get(key) ?? 0) + 1);
      }
      const sample = runs[probes % runs.length];
      if (sample) {
        const status = await api.runs
          .get(sample.id)
          .then((run) => run.status)
          .catch(() => "unreadable");
        if (status === "succeeded") succeededDuringOutage.add(sample.id);
      }
      probes++;
      await sleep(500);
    }
    const upAt = Date.now();
    s.postgres.start();
    const backReady = await until(
      async () => (await readiness(procs[0]?.proc.port ?? 0)) === 200,
      60_000,
      200,
    );
    const readyAfter = (Date.now() - upAt) / 1000;
    const restarted = await supervise(s, procs);
    const settled = await settle(s, runs, 300_000);
    const recovery = settled === null ? null : (Date.now() - upAt) / 1000;
    const t = await tally(s, client(procs[0]?.proc.port ?? 0), runs);

    // What the API called succeeded during the outage must be what the store holds.
    const finalStatus = new Map<string, string>();
    for (const run of runs) finalStatus.set(run.id, (await api.runs.get(run.id)).status);
    for (const id of succeededDuringOutage) {
      if (finalStatus.get(id) !== "succeeded") {
        t.lostRecords++;
        t.problems.push(
          `run ${id} was reported succeeded during the outage but ended ${finalStatus.get(id)}`,
        );
      }
    }
    const notReady = [...ready].filter(([code]) => code !== 200).reduce((n, [, count]) => n + count, 0);
    const readyProbes = [...ready].reduce((n, [, count]) => n + count, 0);
    if (ready.get(200))
      t.problems.push(`readiness answered 200 ${ready.get(200)} times while PostgreSQL was down`);
    if (refusals.get("accepted"))
      t.problems.push(`${refusals.get("accepted")} runs accepted while PostgreSQL was down`);
    if (!backReady) t.problems.push("readiness did not return to 200 within 60 s of PostgreSQL's return");
    return {
      drill: "postgres-outage",
      quick,
      fault: `PostgreSQL stopped (pg_ctl stop -m fast) for ${outageMs / 1000} s with the batch in flight`,
      start: started.toISOString(),
      end: new Date().toISOString(),
      recoverySeconds: recovery,
      ...t,
      details: {
        outageSeconds: (upAt - downAt) / 1000,
        runningAtOutage: inFlight,
        queuedAtOutage: queued,
        readinessDuringOutage: Object.fromEntries(ready),
        submissionsDuringOutage: Object.fromEntries(refusals),
        readySecondsAfterReturn: backReady ? readyAfter : null,
        processesRestarted: restarted,
      },
      ok:
        recovery !== null &&
        backReady &&
        notReady === readyProbes &&
        !refusals.get("accepted") &&
        t.lostRecords === 0 &&
        t.duplicatedEffects === 0,
    };
  } finally {
    await teardown(s);
  }
}
