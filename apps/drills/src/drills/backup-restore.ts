import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  client,
  kill9,
  ledgerEntries,
  openrathSync,
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

/**
 * Drill 6: `pg_dump` of the store while runs are live; the primary is lost a moment later
 * (every process killed); the dump is restored into a fresh database, `openrath migrate --check`
 * passes on it, and new processes resume the restored runs to completion.
 *
 * RPO: from the dump's snapshot to the loss. RTO: from the loss to the restored API answering
 * ready. An effect the primary made after the snapshot is unknown to the restored store and is
 * made again (with the same idempotency key, which a keyed service would deduplicate): reported
 * as `replayedPastBackup`, not as a duplicate. A duplicate is an effect the restored store knew
 * as done (or in doubt) and made again.
 */
export async function backupRestore(quick: boolean): Promise<Report> {
  const s = await stage("backup-restore");
  const started = new Date();
  try {
    const api = client((await start(s, "serve")).port);
    await start(s, "worker");
    await start(s, "worker");
    const runs = await submitBatch(api, "backup", quick ? 24 : 90);
    await sleep(1500);
    const live = await statuses(s, runs);
    const runningAtBackup = runs.filter((run) => live.get(run.id) === "running").length;
    const dump = join(s.dir, "store.dump");
    const snapshotAt = Date.now();
    const dumped = s.postgres.tool("pg_dump", ["-Fc", "-n", "openrath", "-f", dump, "postgres"]);
    if (dumped.status !== 0) throw new Error(`pg_dump failed: ${dumped.stderr}`);
    const dumpSeconds = (Date.now() - snapshotAt) / 1000;
    // The primary keeps working a moment, then is lost.
    await sleep(1000);
    for (const proc of [...s.procs]) await kill9(proc);
    const lostAt = Date.now();
    const primaryEffects = ledgerEntries(s.ledger);

    const created = s.postgres.tool("createdb", ["restored"]);
    if (created.status !== 0) throw new Error(`createdb failed: ${created.stderr}`);
    const restoredDump = s.postgres.tool("pg_restore", ["--no-owner", "-d", "restored", dump]);
    if (restoredDump.status !== 0) throw new Error(`pg_restore failed: ${restoredDump.stderr}`);
    // The effects as of the snapshot: those done there must not be made again.
    const known = await s.postgres.query<{ key: string; status: string }>(
      "select idempotency_key as key, status from openrath.effects where idempotency_key is not null",
      [],
      "restored",
    );
    const knownAtBackup = new Map(known.map((row) => [row.key, row.status]));
    const ledger = join(s.dir, "ledger-restored.jsonl");
    writeFileSync(ledger, "");
    const r: Stage = {
      ...s,
      database: "restored",
      ledger,
      env: { ...s.env, DATABASE_URL: s.postgres.url("restored"), DRILL_LEDGER: ledger },
    };
    const check = openrathSync(r, ["migrate", "--check"]);
    const restoredServe = await start(r, "serve");
    const ready = await until(async () => {
      const response = await fetch(`http://127.0.0.1:${restoredServe.port}/health/ready`);
      return response.status === 200;
    }, 60_000);
    const rto = (Date.now() - lostAt) / 1000;
    await start(r, "worker");
    await start(r, "worker");
    const restoredApi = client(restoredServe.port);
    const inDump = await statuses(r, runs);
    const restoredRuns = runs.filter((run) => inDump.has(run.id));
    const settled = await settle(r, restoredRuns, 300_000);
    const recovery = settled === null ? null : (Date.now() - lostAt) / 1000;
    // Every charge a restored run made is in one of the two ledgers; duplicates are counted below.
    const t = await tally(r, restoredApi, restoredRuns, { ledgers: [s.ledger, ledger], duplicates: false });

    const beforeLoss = new Set(primaryEffects.map((entry) => entry.key));
    let replayedPastBackup = 0;
    for (const entry of ledgerEntries(ledger)) {
      if (!entry.key || !beforeLoss.has(entry.key)) continue;
      replayedPastBackup++;
    }
    // The dump's own effect rows are as of the snapshot; a restored run that re-made one the
    // snapshot had as succeeded would have a ledger line in the restored timeline for a key the
    // primary made before the snapshot.
    const snapshotDone = primaryEffects.filter(
      (entry) => entry.key && knownAtBackup.get(entry.key) === "succeeded",
    );
    const remade = new Set(ledgerEntries(ledger).map((entry) => entry.key));
    for (const entry of snapshotDone) {
      if (remade.has(entry.key)) {
        t.duplicatedEffects++;
        t.problems.push(`effect ${entry.key} was done at the backup and made again after the restore`);
      }
    }
    replayedPastBackup -= snapshotDone.filter((entry) => remade.has(entry.key)).length;
    if (check.status !== 0)
      t.problems.push(`openrath migrate --check failed on the restored store: ${check.stderr}`);
    return {
      drill: "backup-restore",
      quick,
      fault:
        "pg_dump while runs are live, the primary lost 1 s later, the dump restored into a fresh database",
      start: started.toISOString(),
      end: new Date().toISOString(),
      recoverySeconds: recovery,
      ...t,
      details: {
        runningAtBackup,
        dumpSeconds,
        rpoSeconds: (lostAt - snapshotAt) / 1000,
        rtoSeconds: ready ? rto : null,
        runsInDump: restoredRuns.length,
        runsLostByRpo: runs.length - restoredRuns.length,
        migrateCheck: check.status,
        primaryEffects: primaryEffects.length,
        primaryEffectsUnknownToBackup: primaryEffects.filter(
          (entry) => entry.key && knownAtBackup.get(entry.key) !== "succeeded",
        ).length,
        replayedPastBackup,
      },
      ok:
        recovery !== null && ready && check.status === 0 && t.lostRecords === 0 && t.duplicatedEffects === 0,
    };
  } finally {
    await teardown(s);
  }
}
