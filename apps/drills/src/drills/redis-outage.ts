import { setTimeout as sleep } from "node:timers/promises";
import type { StoredEvent } from "@openrath/client";
import {
  client,
  type Report,
  settle,
  stage,
  start,
  statuses,
  submitBatch,
  tally,
  teardown,
} from "../harness.js";

/**
 * Drill 4: Redis killed under a batch in flight, and kept down until the batch is done: the runs
 * must finish and the followers' streams end on the fallback path (the store's own
 * notifications). Then Redis returns and a second batch finishes as well.
 */
export async function redisOutage(quick: boolean): Promise<Report> {
  const s = await stage("redis-outage", { redis: true });
  const started = new Date();
  const redis = s.redis;
  if (!redis) throw new Error("the stage has no Redis");
  try {
    const serve = await start(s, "serve");
    const api = client(serve.port);
    await start(s, "worker");
    await start(s, "worker");
    const runs = await submitBatch(api, "redis", quick ? 24 : 72);
    // Followers of a few runs, over SSE, across the outage.
    const followed = runs.slice(0, 6).map(async (run) => {
      const seen: StoredEvent[] = [];
      for await (const event of api.events.stream(run.id, { reconnect: { retries: 50, minDelayMs: 100 } }))
        if (!event.live) seen.push(event);
      return { run, seen };
    });
    await sleep(1500);
    const before = await statuses(s, runs);
    const inFlight = runs.filter((run) => before.get(run.id) === "running").length;
    const downAt = Date.now();
    await redis.stop();
    const during = await submitBatch(api, "redis-down", quick ? 6 : 18);
    const all = [...runs, ...during];
    const settled = await settle(s, all, 300_000);
    const recovery = settled === null ? null : (Date.now() - downAt) / 1000;
    const streams = await Promise.race([Promise.all(followed), sleep(60_000).then(() => undefined)]);
    const upAt = Date.now();
    await redis.start();
    const after = await submitBatch(api, "redis-back", quick ? 6 : 18);
    const afterSettled = await settle(s, after, 300_000);
    const t = await tally(s, api, [...all, ...after]);
    if (!streams) {
      t.lostRecords++;
      t.problems.push("a follower's stream did not end within 60 s of its run's end, with Redis down");
    } else {
      for (const { run, seen } of streams) {
        const stored: number[] = [];
        for await (const event of api.events.listAll(run.id)) stored.push(event.sequence);
        const got = seen.map((event) => event.sequence);
        if (JSON.stringify(got) !== JSON.stringify(stored)) {
          t.lostRecords++;
          t.problems.push(
            `run ${run.id}: the follower saw ${got.join(",")}, the store holds ${stored.join(",")}`,
          );
        }
      }
    }
    return {
      drill: "redis-outage",
      quick,
      fault: "Redis killed (SIGKILL) with the batch in flight, down until the batch is done, then restarted",
      start: started.toISOString(),
      end: new Date().toISOString(),
      recoverySeconds: recovery,
      ...t,
      details: {
        runningAtOutage: inFlight,
        submittedWhileDown: during.length,
        submittedAfterReturn: after.length,
        secondsDown: (upAt - downAt) / 1000,
        afterReturnSettledSeconds: afterSettled,
        followers: streams?.length ?? 0,
      },
      ok:
        recovery !== null &&
        afterSettled !== null &&
        streams !== undefined &&
        t.lostRecords === 0 &&
        t.duplicatedEffects === 0,
    };
  } finally {
    await teardown(s);
  }
}
