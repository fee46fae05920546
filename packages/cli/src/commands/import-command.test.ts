import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readSessionLog } from "@openrath/core/node";
import { createDurableRuntime } from "@openrath/runtime-durable";
import { pgliteStore } from "@openrath/store-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runMain } from "../testing/run-cli.js";

let dir: string;
const cli = (argv: string[]) => runMain(argv, { cwd: dir });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "openrath-import-"));
  const recorded = await cli(["demo", "--record", "recording"]);
  expect(recorded.code, recorded.stderr).toBe(0);
}, 120_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Imported {
  readonly source: string;
  readonly runId: string;
  readonly sessionId: string;
  readonly status: string;
  readonly created: boolean;
}

const lines = (text: string) =>
  text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Imported);

describe("openrath import", () => {
  it("brings a recording in as historical runs with their sessions, once, and the run commands show them", async () => {
    const logs = (await readdir(join(dir, "recording"))).filter((name) => name.endsWith(".jsonl"));
    const first = await cli(["import", "recording", "--state", "state", "--json"]);
    expect(first.code, first.stderr).toBe(0);
    const imported = lines(first.stdout);
    expect(imported).toHaveLength(logs.length);
    expect(imported.every((item) => item.created && item.status === "succeeded")).toBe(true);

    // Again: the same runs, nothing new.
    const again = await cli(["import", "recording", "--state", "state"]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`0 imported, ${logs.length} already there`);
    for (const item of imported)
      expect(again.stdout).toContain(`run ${item.runId} (succeeded), imported before`);

    const listed = await cli(["runs", "list", "--state", "state", "--json"]);
    expect(listed.code, listed.stderr).toBe(0);
    const runs = listed.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { id: string; workflow: string; metadata: Record<string, unknown> });
    expect(runs.map((run) => run.id).sort()).toEqual(imported.map((item) => item.runId).sort());
    expect(runs.every((run) => run.workflow === "openrath.import" && run.metadata.imported === true)).toBe(
      true,
    );

    // Each run holds its log's session: same id, chunks and lineage.
    const store = await pgliteStore({ dataDir: join(dir, "state", "db") });
    const runtime = createDurableRuntime({ store });
    try {
      for (const item of imported) {
        const log = await readSessionLog(join(dir, item.source));
        expect(item.sessionId).toBe(log.session.id);
        expect((await runtime.session(item.runId)).toJSON()).toEqual(log.session.toJSON());
      }
    } finally {
      await runtime.close();
    }
  }, 120_000);

  it("imports a log its writer never closed as a failed run, and refuses a missing path", async () => {
    const logs = (await readdir(join(dir, "recording"))).filter((name) => name.endsWith(".jsonl"));
    const name = logs[0] ?? "";
    const cut = join(dir, "cut");
    await cp(join(dir, "recording"), cut, { recursive: true });
    // Drop the trailer, as a crash before the writer closed would leave the file.
    const text = await readFile(join(cut, name), "utf8");
    const kept = text.trimEnd().split("\n").slice(0, -1).join("\n");
    await writeFile(join(cut, name), `${kept}\n`);
    expect((await readSessionLog(join(cut, name))).closed).toBe(false);
    const result = await cli(["import", join("cut", name), "--state", "partial-state", "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const [item] = lines(result.stdout);
    expect(item).toMatchObject({ status: "failed", created: true });
    const shown = await cli(["runs", "show", item?.runId ?? "", "--state", "partial-state", "--json"]);
    expect(JSON.parse(shown.stdout)).toMatchObject({ error: { code: "imported_partial" } });

    const missing = await cli(["import", "no-such-dir", "--state", "partial-state"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/No file or directory .*no-such-dir \[not_found\]\n$/);
  }, 60_000);
});
