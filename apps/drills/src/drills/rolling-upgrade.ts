import { setTimeout as sleep } from "node:timers/promises";
import {
  client,
  type Proc,
  type Report,
  type Submitted,
  settle,
  stage,
  start,
  submitBatch,
  tally,
  teardown,
} from "../harness.js";

/** SIGTERM, the way a rolling update stops a pod: its steps finish or are handed over. */
async function stop(proc: Proc): Promise<number | string | null> {
  proc.child.kill("SIGTERM");
  const code = await proc.exited;
  return code ?? proc.child.signalCode;
}

/**
 * Drill 7: a rolling upgrade from revision 1 (N−1) of the ledger workflow to revision 2 (N) on one
 * database, workers of both side by side, then a roll back. Runs pin the plan they were submitted
 * with: revision 1's runs finish on revision 1's workers while revision 2's start, and after the
 * roll back new runs are revision 1's again. Revisions are of the workflow, on this checkout's code.
 */
export async function rollingUpgrade(quick: boolean): Promise<Report> {
  const s = await stage("rolling-upgrade");
  const started = new Date();
  const v1 = { env: { DRILL_REVISION: "1" } };
  const v2 = { env: { DRILL_REVISION: "2" } };
  const perPhase = quick ? 12 : 45;
  try {
    const serve1 = await start(s, "serve", v1);
    let api = client(serve1.port);
    const old = [await start(s, "worker", v1), await start(s, "worker", v1)];
    const before = await submitBatch(api, "n-1", perPhase);
    await sleep(1000);

    // Roll: a worker of N joins, one of N−1 leaves, then the other; the API rolls last.
    const nw = [await start(s, "worker", v2)];
    const exits: (number | string | null)[] = [await stop(old[0] as Proc)];
    nw.push(await start(s, "worker", v2));
    const during = await submitBatch(api, "rolling", perPhase);
    const serve2 = await start(s, "serve", v2);
    api = client(serve2.port);
    exits.push(await stop(serve1));
    const after = await submitBatch(api, "n", perPhase);
    await settle(s, before, 300_000);
    exits.push(await stop(old[1] as Proc));

    // Roll back: N−1 workers return, the name points back at revision 1, N's workers drain and leave.
    await start(s, "worker", v1);
    await start(s, "worker", v1);
    await api.assistants.deploy("ledger", "1");
    const rolledBack = await submitBatch(api, "rolled-back", perPhase);
    await settle(s, [...during, ...after], 300_000);
    for (const proc of nw) exits.push(await stop(proc));
    const rollbackAt = Date.now();
    const all: Submitted[] = [...before, ...during, ...after, ...rolledBack];
    const settled = await settle(s, all, 300_000);
    const recovery = settled === null ? null : (Date.now() - rollbackAt) / 1000;
    const t = await tally(s, api, all);

    const rows = await s.postgres.query<{ id: string; version: string }>(
      `select r.id::text, v.version from openrath.runs r
         join openrath.plan_versions v on v.hash = r.plan_hash and v.name = r.workflow
        where r.id = any($1::uuid[]) and r.workflow = 'ledger'`,
      [all.map((run) => run.id)],
    );
    const revisionOf = new Map(rows.map((row) => [row.id, row.version]));
    const revisions: Record<string, Record<string, number>> = {};
    const expect = (runs: Submitted[], phase: string, want: string | undefined) => {
      revisions[phase] = {};
      for (const run of runs.filter((r) => r.workflow === "ledger")) {
        const got = revisionOf.get(run.id) ?? "?";
        revisions[phase][got] = (revisions[phase][got] ?? 0) + 1;
        if (want !== undefined && got !== want)
          t.problems.push(`run ${run.id} (${phase}) ran revision ${got}`);
      }
    };
    expect(before, "before", "1");
    expect(during, "during", undefined);
    expect(after, "after", "2");
    expect(rolledBack, "rolledBack", "1");
    // Not a lost record (their runs were taken over): a stop that was not graceful, reported.
    const abrupt = exits.filter((code) => code !== 0).length;
    if (abrupt > 0)
      t.problems.push(
        `${abrupt} of ${exits.length} processes stopped with SIGTERM did not exit 0 (ended by the signal): their steps were taken over after the lease instead of handed over`,
      );
    const revisionProblems = t.problems.filter((p) => p.includes("ran revision")).length;
    return {
      drill: "rolling-upgrade",
      quick,
      fault:
        "rolling upgrade of workers and API from workflow revision 1 to 2 on one database, then a roll back",
      start: started.toISOString(),
      end: new Date().toISOString(),
      recoverySeconds: recovery,
      ...t,
      details: { revisionsByPhase: revisions, gracefulExits: exits },
      ok: recovery !== null && revisionProblems === 0 && t.lostRecords === 0 && t.duplicatedEffects === 0,
    };
  } finally {
    await teardown(s);
  }
}
