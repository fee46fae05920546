#!/usr/bin/env node
// The whole test suite, as CI runs it: start the services the tests need, build, lint, typecheck,
// run every vitest project once with a JSON report, and end with the line
// `N passed, N failed[, N skipped]` counted from that report.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureServices } from "./services.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const ci = process.env.CI === "true" || process.env.CI === "1";
const report = join(root, "test-results", "vitest.json");

function step(name, command, args, env = {}) {
  process.stderr.write(`\n▶ ${name}: ${command} ${args.join(" ")}\n`);
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit", env: { ...process.env, ...env } });
  if (result.status !== 0)
    process.stderr.write(`✖ ${name} failed (exit ${result.status ?? result.signal})\n`);
  return result.status === 0;
}

const failures = [];
const serviceEnv = await ensureServices({ root, required: ci }).catch((error) => {
  failures.push(`services: ${error.message}`);
  return {};
});

for (const [name, args] of [
  ["build", ["run", "build"]],
  ["lint", ["run", "lint"]],
  ["typecheck", ["run", "typecheck"]],
]) {
  if (!step(name, "pnpm", args)) failures.push(name);
}

rmSync(report, { force: true });
mkdirSync(dirname(report), { recursive: true });
const testsOk = step(
  "tests",
  "pnpm",
  ["exec", "vitest", "run", "--reporter=default", "--reporter=json", `--outputFile.json=${report}`],
  { ...serviceEnv, ...(ci ? { OPENRATH_REQUIRE_SERVICES: "1" } : {}) },
);
if (!testsOk) failures.push("tests");

let passed = 0;
let failed = 0;
let skipped = 0;
if (existsSync(report)) {
  const json = JSON.parse(readFileSync(report, "utf8"));
  passed = json.numPassedTests ?? 0;
  failed = json.numFailedTests ?? 0;
  skipped = (json.numPendingTests ?? 0) + (json.numTodoTests ?? 0);
  // A suite that failed to load counts its file as one failure, so it cannot pass unnoticed.
  failed += (json.testResults ?? []).filter(
    (file) => file.status === "failed" && file.assertionResults.length === 0,
  ).length;
} else {
  failures.push("no test report");
}
if (passed + failed === 0) failures.push("no test ran");

if (failures.length > 0) process.stderr.write(`\nFailed steps: ${failures.join(", ")}\n`);
process.stdout.write(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}\n`);
process.exit(failures.length > 0 || failed > 0 ? 1 : 0);
