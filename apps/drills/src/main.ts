// `pnpm drills [names...] [--quick]`: runs the chosen drills (all without names), one after another,
// writes each one's JSON report to apps/drills/reports/ and prints a summary table. Exits 1 when a
// drill lost a record or duplicated an effect, or did not recover.
import { relative } from "node:path";
import { backupRestore } from "./drills/backup-restore.js";
import { diskFull } from "./drills/disk-full.js";
import { killApi } from "./drills/kill-api.js";
import { killWorker } from "./drills/kill-worker.js";
import { postgresOutage } from "./drills/postgres-outage.js";
import { redisOutage } from "./drills/redis-outage.js";
import { rollingUpgrade } from "./drills/rolling-upgrade.js";
import { s3Restart } from "./drills/s3-restart.js";
import { type Report, ROOT, writeReport } from "./harness.js";

const DRILLS: Record<string, (quick: boolean) => Promise<Report>> = {
  "kill-worker": killWorker,
  "kill-api": killApi,
  "postgres-outage": postgresOutage,
  "redis-outage": redisOutage,
  "backup-restore": backupRestore,
  "rolling-upgrade": rollingUpgrade,
  "s3-restart": s3Restart,
  "disk-full": diskFull,
};

const argv = process.argv.slice(2).filter((arg) => arg !== "--");
const quick = argv.includes("--quick");
const names = argv.filter((arg) => !arg.startsWith("--"));
const unknown = names.filter((name) => !(name in DRILLS));
if (unknown.length > 0 || argv.includes("--help")) {
  process.stderr.write(
    `${unknown.length > 0 ? `unknown drill ${unknown.join(", ")}\n` : ""}usage: pnpm drills [--quick] [${Object.keys(DRILLS).join(" | ")} ...]\n`,
  );
  process.exit(2);
}

const reports: Report[] = [];
for (const name of names.length > 0 ? names : Object.keys(DRILLS)) {
  process.stderr.write(`drill ${name}${quick ? " (quick)" : ""}…\n`);
  const drill = DRILLS[name] as (quick: boolean) => Promise<Report>;
  let report: Report;
  try {
    report = await drill(quick);
  } catch (error) {
    const now = new Date().toISOString();
    report = {
      drill: name,
      quick,
      fault: "(the drill did not complete)",
      start: now,
      end: now,
      recoverySeconds: null,
      submitted: 0,
      succeeded: 0,
      failed: 0,
      parked: 0,
      duplicatedEffects: 0,
      lostRecords: 0,
      problems: [String((error as Error)?.stack ?? error)],
      details: {},
      ok: false,
    };
  }
  const file = writeReport(report);
  reports.push(report);
  process.stderr.write(`  ${report.ok ? "ok" : "FAILED"}: ${relative(ROOT, file)}\n`);
  for (const problem of report.problems.slice(0, 20)) process.stderr.write(`  - ${problem}\n`);
}

const header = [
  "drill",
  "ok",
  "recovery s",
  "submitted",
  "succeeded",
  "failed",
  "parked",
  "duplicated",
  "lost",
];
const rows = reports.map((r) => [
  r.drill,
  r.ok ? "yes" : "NO",
  r.recoverySeconds === null ? "-" : r.recoverySeconds.toFixed(1),
  String(r.submitted),
  String(r.succeeded),
  String(r.failed),
  String(r.parked),
  String(r.duplicatedEffects),
  String(r.lostRecords),
]);
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? "").length)));
for (const row of [header, ...rows]) {
  process.stdout.write(`${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  ")}\n`);
}
process.exit(reports.every((r) => r.ok) ? 0 : 1);
