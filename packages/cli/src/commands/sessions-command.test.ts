import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Session } from "@openrath/core";
import { SessionLogWriter, writeSessionLog } from "@openrath/core/node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runMain } from "../testing/run-cli.js";

const DAY = 86_400_000;
let dir: string;
let writers: SessionLogWriter[];

const cli = (argv: string[], now = Date.now()) => runMain(argv, { env: {}, cwd: dir, now: () => now });

/** Writes a closed log and sets its header's created_at to `daysAgo` days before now. */
async function closedLog(text: string, daysAgo: number): Promise<string> {
  const path = await writeSessionLog(Session.fromUserMessage(text), { dir });
  await backdate(path, daysAgo);
  return path;
}

async function backdate(path: string, daysAgo: number): Promise<void> {
  const lines = (await readFile(path, "utf8")).split("\n");
  const header = JSON.parse(lines[0]!);
  header.created_at = new Date(Date.now() - daysAgo * DAY).toISOString();
  lines[0] = JSON.stringify(header);
  await writeFile(path, lines.join("\n"));
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "openrath-prune-"));
  writers = [];
});

afterEach(async () => {
  for (const w of writers) await w.abandon();
  await rm(dir, { recursive: true, force: true });
});

describe("openrath sessions prune", () => {
  it("lists what it would delete with --dry-run and deletes nothing", async () => {
    const old = await closedLog("old", 10);
    const fresh = await closedLog("fresh", 1);
    const run = await cli(["sessions", "prune", "--older-than", "7d", "--dry-run", "--dir", "."]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^would delete ${old} \\(created \\S+\\)\\n`));
    expect(run.stdout).toContain(`Would delete 1 of 2 logs older than 7d in ${dir}\n`);
    expect(run.stdout).not.toContain(fresh);
    expect(existsSync(old)).toBe(true);
  });

  it("deletes logs whose header is older than the duration, keeping newer ones", async () => {
    const old = await closedLog("old", 10);
    const older = await closedLog("older", 30);
    const fresh = await closedLog("fresh", 0.25);
    const run = await cli(["sessions", "prune", "--older-than", "7d", "--dir", dir]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`deleted ${old}`);
    expect(run.stdout).toContain(`deleted ${older}`);
    expect(run.stdout).toContain("Deleted 2 of 3 logs older than 7d");
    expect(existsSync(old) || existsSync(older)).toBe(false);
    expect(existsSync(fresh)).toBe(true);
    const hours = await cli(["sessions", "prune", "--older-than", "3h", "--dir", dir]);
    expect(hours.stdout).toContain("Deleted 1 of 1 log older than 3h");
    expect(await readdir(dir)).toEqual([]);
  });

  it("keeps unfinished logs unless --include-partial, and never one whose writer holds the lock", async () => {
    const abandoned = await SessionLogWriter.open(Session.fromUserMessage("crashed"), { dir });
    await abandoned.abandon();
    await backdate(abandoned.partialPath, 10);
    const live = await SessionLogWriter.open(Session.fromUserMessage("still writing"), { dir });
    writers.push(live);
    await backdate(live.partialPath, 10);

    const kept = await cli(["sessions", "prune", "--older-than", "1d", "--dir", dir]);
    expect(kept.stdout).toBe(
      `Deleted 0 of 2 logs older than 1d in ${dir} (2 unfinished kept; pass --include-partial to delete them)\n`,
    );
    const run = await cli(["sessions", "prune", "--older-than", "1d", "--include-partial", "--dir", dir]);
    expect(run.stdout).toContain(`deleted ${abandoned.partialPath}`);
    expect(run.stdout).toContain(`kept ${live.partialPath}: a writer holds ${live.path}.lock`);
    expect(run.stdout).toContain("Deleted 1 of 2 logs older than 1d");
    expect(existsSync(abandoned.partialPath)).toBe(false);
    expect(existsSync(live.partialPath)).toBe(true);
  });

  it("uses the clock it is given", async () => {
    const log = await closedLog("today", 0);
    const later = await cli(
      ["sessions", "prune", "--older-than", "1w", "--dir", dir, "--dry-run"],
      Date.now() + 8 * DAY,
    );
    expect(later.stdout).toContain(`would delete ${log}`);
  });
});
