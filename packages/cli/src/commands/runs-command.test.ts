import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Session } from "@openrath/core";
import { createDurableRuntime, defineWorkflow } from "@openrath/runtime-durable";
import { pgliteStore } from "@openrath/store-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runMain } from "../testing/run-cli.js";

let dir: string;

const cli = (argv: string[]) => runMain(argv, { cwd: dir });

let runId: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "openrath-cli-runs-"));
  // The demo is durable by default.
  const demo = await cli(["demo", "--state", "st"]);
  expect(demo.code, demo.stderr).toBe(0);
  runId = /Started run ([0-9a-f-]+)/.exec(demo.stderr)![1]!;
  expect(demo.stdout).toContain(`Run ${runId}: succeeded, a durable run on the embedded store`);
  expect(demo.stdout).toContain(`Inspect it:         openrath runs show ${runId} --state ${join(dir, "st")}`);
  expect(demo.stdout).toContain(`Open it in the API: openrath serve --state ${join(dir, "st")}`);
  expect(demo.stdout).toContain("Usage by agent and model:");
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("openrath runs, straight from the embedded store", () => {
  it("lists the demo's run and shows it", async () => {
    const listed = await cli(["runs", "list", "--state", "st", "--json"]);
    expect(listed.code).toBe(0);
    const runs = listed.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(runs).toMatchObject([{ id: runId, workflow: "durable-mams", status: "succeeded" }]);
    const none = await cli(["runs", "list", "--state", "st", "--status", "running"]);
    expect(none.stdout).toBe("No runs.\n");
    const shown = await cli(["runs", "show", runId, "--state", "st"]);
    expect(shown.stdout).toMatch(new RegExp(`^Run ${runId} \\(succeeded\\)\\n  workflow   durable-mams\\n`));
    expect(shown.stdout).toContain("  steps      8 done");
  });

  it("prints the events in order, from a sequence number on", async () => {
    const all = (await cli(["runs", "events", runId, "--state", "st", "--json"])).stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(all[0]).toMatchObject({ sequence: 1, type: "run.created" });
    expect(all.map((e) => e.sequence)).toEqual(all.map((_, i) => i + 1));
    expect(all.filter((e) => e.type === "run.checkpoint").length).toBeGreaterThan(5);
    expect(all.at(-1)).toMatchObject({ type: "run.state.changed", data: { to: "succeeded" } });
    const later = (await cli(["runs", "events", runId, "--state", "st", "--after", "3", "--json"])).stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(later).toEqual(all.slice(3));
  });

  it("refuses what it cannot do with a coded one-line error", async () => {
    const ended = await cli(["runs", "cancel", runId, "--state", "st"]);
    expect(ended.code).toBe(1);
    expect(ended.stderr).toMatch(/is terminal\. \[invalid_transition\]\n$/);
    const unknown = await cli(["runs", "show", "no-such-run", "--state", "st"]);
    expect(unknown.stderr).toBe("openrath: No run no-such-run in tenant default [not_found]\n");
    const otherTenant = await cli(["runs", "show", runId, "--state", "st", "--tenant", "acme"]);
    expect(otherTenant.stderr).toContain("[not_found]");
    const noStore = await cli(["runs", "list", "--state", "nowhere"]);
    expect(noStore.code).toBe(1);
    expect(noStore.stderr).toMatch(/^openrath: No embedded store at .*nowhere.* \[not_found\]\n$/);
    const badStatus = await cli(["runs", "list", "--state", "st", "--status", "done"]);
    expect(badStatus.code).toBe(2);
    const notParked = await cli(["runs", "resume", runId, "--state", "st"]);
    expect(notParked.code).toBe(1);
    expect(notParked.stderr).toMatch(/only a run parked for review .*\[invalid_transition\]\n$/);
  });

  it("resumes a run parked for review", async () => {
    // A run a worker parked for review, made with the store the command then opens.
    const store = await pgliteStore({ dataDir: join(dir, "st", "db") });
    const runtime = createDurableRuntime({ store });
    let parked: string;
    try {
      const plan = await runtime.register(defineWorkflow("held").step("one", (s) => s, { entry: true }));
      const run = await runtime.submit(plan, Session.fromUserMessage("hold"));
      const [claim] = await store.claim({ workerId: "w", planHashes: [plan.hash], leaseMs: 30_000 });
      await store.park(claim!.fence, { status: "needs_review", reason: "look first" });
      parked = run.id;
    } finally {
      await runtime.close();
    }
    const resumed = await cli(["runs", "resume", parked, "--state", "st", "--reason", "looked", "--json"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ id: parked, status: "queued" });
  });

  it("lists newest first, as the server does, and pages to the older runs with --after", async () => {
    const store = await pgliteStore({ dataDir: join(dir, "pages", "db") });
    const runtime = createDurableRuntime({ store });
    const ids: string[] = [];
    try {
      const plan = await runtime.register(defineWorkflow("paged").step("one", (s) => s, { entry: true }));
      for (const text of ["first", "second", "third"])
        ids.push((await runtime.submit(plan, Session.fromUserMessage(text))).id);
    } finally {
      await runtime.close();
    }
    const lines = (out: string) =>
      out
        .trimEnd()
        .split("\n")
        .map((l) => (JSON.parse(l) as { id: string }).id);
    const first = await cli(["runs", "list", "--state", "pages", "--limit", "2", "--json"]);
    expect(first.code, first.stderr).toBe(0);
    expect(lines(first.stdout)).toEqual([ids[2], ids[1]]);
    const shown = await cli(["runs", "list", "--state", "pages", "--limit", "2"]);
    expect(shown.stderr).toContain(`More: --after ${ids[1]}`);
    const rest = await cli(["runs", "list", "--state", "pages", "--limit", "2", "--after", ids[1] ?? ""]);
    expect(
      rest.stdout
        .trimEnd()
        .split("\n")
        .map((l) => l.split(" ")[0]),
    ).toEqual([ids[0]]);
    // The last page says no more.
    expect(rest.stderr).not.toContain("More:");
  });
});
