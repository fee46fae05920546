import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDurableRuntime } from "@openrath/runtime-durable";
import type { RunStoreV1 } from "@openrath/runtime-durable/store";
import pg from "pg";
import { afterAll, beforeAll, describe, type ExpectStatic, it } from "vitest";
import { pgliteStore, postgresStore } from "./postgres-store.js";
import {
  type FakeOpenAIServer,
  fakeOpenAIServer,
  type ScenarioCounts,
  TOOL_TURNS,
} from "./testing/fake-openai-server.js";
import { transcript } from "./testing/journal-agent.js";
import { killPoints, runKillWorker } from "./testing/journal-kill-points.js";
import { POSTGRES_URL, postgres } from "./testing/postgres-url.js";

// A restart under the same worker id takes its run back at once, so the lease only has to outlast
// a loaded machine's stalls: at 2 s, PGlite's workers lost leases mid-call and repeated those calls.
const LEASE_MS = 10_000;
const TURNS = TOOL_TURNS + 1;

let server: FakeOpenAIServer;
beforeAll(async () => {
  server = await fakeOpenAIServer();
});
afterAll(async () => {
  await server.close();
});

/** Where a driver's worker processes find the store. */
interface Target {
  readonly driver: "postgres" | "pglite";
  readonly target: string;
  readonly schema: string;
}

/**
 * Runs the kill-point agent once in `scenario`: a worker process per kill point, each killed (by
 * itself) at its point and followed by the next under the same worker id, then one that finishes
 * the run. Returns the run's id.
 */
async function runThrough(
  expect: ExpectStatic,
  where: Target,
  scenario: string,
  points: readonly string[],
): Promise<string> {
  const worker = {
    ...where,
    workerId: `kill-${scenario}`,
    leaseMs: LEASE_MS,
    service: `${server.url}/${scenario}`,
    key: scenario,
  };
  for (const point of points) {
    const exit = await runKillWorker({ ...worker, killAt: point });
    expect(exit.killedAt, `the worker reached kill point ${point} (${exit.stderr})`).toBe(point);
    expect(exit.signal).toBe("SIGKILL");
  }
  const last = await runKillWorker(worker);
  expect(last.status, `the run ended (${last.stderr})`).toBe("succeeded");
  return last.doneRunId!;
}

/**
 * The behaviour under test: every kill point of an eight-turn agent with two tools per turn, one
 * kill -9 each, against the same program never killed. Provider requests and tool calls are
 * counted by the fake server in this process, outside the workers.
 */
async function killEverywhere(
  expect: ExpectStatic,
  where: Target,
  open: () => Promise<RunStoreV1>,
): Promise<void> {
  const name = `${where.driver}-${randomBytes(3).toString("hex")}`;
  const points = killPoints();
  const anchorRun = await runThrough(expect, where, `${name}-plain`, []);
  const killedRun = await runThrough(expect, where, `${name}-killed`, points);

  const plain = server.counts(`${name}-plain`);
  const killed = server.counts(`${name}-killed`);
  const once = Array.from({ length: TURNS }, () => 1);
  expect(plain.completions).toEqual(once);
  expect(plain.searches).toEqual(once.slice(1));
  expect([...plain.notes.values()]).toEqual(once.slice(1));

  const at = (turn: number, point: string) => (points.includes(`${turn}:${point}`) ? 1 : 0);
  for (let turn = 1; turn <= TURNS; turn++) {
    // A kill in the model request loses a reply the server gave: that call is paid twice. Right
    // after the reply, its entry may not have landed: at most once more. A kill anywhere else (in
    // a tool, between the tools) pays for no call again.
    const requests = killed.completions[turn - 1] ?? 0;
    expect(requests, `model requests of turn ${turn}`).toBeGreaterThanOrEqual(1 + at(turn, "model"));
    expect(requests, `model requests of turn ${turn}`).toBeLessThanOrEqual(
      1 + at(turn, "model") + at(turn, "reply"),
    );
    if (turn > TOOL_TURNS) continue;
    // A completed tool call recorded in the journal is not made again; one killed inside is, and
    // so may be the search a kill right after the reply finds already sent.
    const searches = killed.searches[turn - 1] ?? 0;
    expect(searches, `searches of turn ${turn}`).toBeGreaterThanOrEqual(1 + at(turn, "search"));
    expect(searches, `searches of turn ${turn}`).toBeLessThanOrEqual(
      1 + at(turn, "search") + at(turn, "reply"),
    );
    const notes = killed.notes.get(`note-${turn}`) ?? 0;
    // A keyed note killed inside its call is sent again with its key, once.
    expect(notes, `notes of turn ${turn}`).toBe(1 + at(turn, "note"));
  }
  const total = (c: ScenarioCounts) => c.completions.reduce((a, b) => a + b, 0);
  const inFlight = points.filter((p) => p.endsWith(":model") || p.endsWith(":reply")).length;
  expect(total(killed)).toBeLessThanOrEqual(total(plain) + inFlight);

  const store = await open();
  try {
    const runtime = createDurableRuntime({ store });
    expect(transcript(await runtime.session(killedRun))).toEqual(
      transcript(await runtime.session(anchorRun)),
    );
    const events = await store.readEvents(killedRun, { limit: 10_000 });
    expect(events.some((e) => e.type === "run.effect.review")).toBe(false);
    const effects = (await runtime.effects.list({ runId: killedRun, status: "succeeded" })).items;
    expect(effects.map((e) => e.idempotencyKey).sort()).toEqual(
      Array.from({ length: TOOL_TURNS }, (_, i) => `note-${i + 1}`).sort(),
    );
  } finally {
    await store.close();
  }
}

const title =
  "an eight-turn agent with two tools per turn, killed -9 at every point (in each model request, right after each reply, in each tool call, between the tools), pays for no provider call again but the one in flight at a kill, repeats no recorded tool call, and ends with the uninterrupted Session";

// The two stores run side by side: each waits on its worker processes most of the time.
describe.concurrent("the journal under kill -9 at every point, with the options a user gets by default", () => {
  it(`PGlite (data directory on disk): ${title}`, async ({ expect }) => {
    const dir = await mkdtemp(join(tmpdir(), "openrath-kill-points-"));
    const dataDir = join(dir, "db");
    try {
      await killEverywhere(expect, { driver: "pglite", target: dataDir, schema: "openrath" }, () =>
        pgliteStore({ dataDir }),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 420_000);

  if (postgres.available) {
    it(`PostgreSQL: ${title}`, async ({ expect }) => {
      const schema = `kill_points_${randomBytes(5).toString("hex")}`;
      const url = POSTGRES_URL!;
      const setup = await postgresStore({ connectionString: url, schema, migrate: true });
      await setup.close();
      try {
        await killEverywhere(expect, { driver: "postgres", target: url, schema }, () =>
          postgresStore({ connectionString: url, schema }),
        );
      } finally {
        const admin = new pg.Client({ connectionString: url });
        await admin.connect();
        await admin.query(`drop schema if exists ${schema} cascade`);
        await admin.end();
      }
    }, 240_000);
  } else {
    it.skip(`PostgreSQL (${postgres.reason})`, () => {});
  }
});
