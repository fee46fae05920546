import { connect, createServer, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import {
  client,
  kill9,
  type Proc,
  type Report,
  type Submitted,
  settle,
  stage,
  start,
  statuses,
  submitBatch,
  tally,
  teardown,
} from "../harness.js";

/**
 * A loopback TCP proxy in front of the API processes, as a load balancer: its upstream can be
 * switched, and it counts the requests that carry `Last-Event-ID` (a follower resuming).
 */
async function balancer() {
  let target = 0;
  let resumed = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    const upstream = connect(target, "127.0.0.1");
    socket.once("data", (head: Buffer) => {
      if (/\r\nlast-event-id:/i.test(head.toString("latin1"))) resumed++;
    });
    socket.pipe(upstream).pipe(socket);
    const end = () => {
      socket.destroy();
      upstream.destroy();
      sockets.delete(socket);
    };
    socket.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : 0,
    to(port: number) {
      target = port;
    },
    resumed: () => resumed,
    close() {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

/**
 * Drill 2: the API process killed (`kill -9`) while clients follow every run's SSE stream through
 * a balancer; the balancer moves to the other API process and the followers resume with
 * `Last-Event-ID`. Each follower must see every stored event once, in order.
 */
export async function killApi(quick: boolean): Promise<Report> {
  const kills = quick ? 2 : 10;
  const s = await stage("kill-api");
  const started = new Date();
  const lb = await balancer();
  try {
    const apis: Proc[] = [await start(s, "serve"), await start(s, "serve")];
    await start(s, "worker");
    await start(s, "worker");
    let current = 0;
    lb.to(apis[current]?.port ?? 0);
    const api = client(lb.port);
    const runs: Submitted[] = [];
    const follows: Promise<{ run: Submitted; seen: number[]; error?: string }>[] = [];
    const follow = (run: Submitted) =>
      (async () => {
        const seen: number[] = [];
        try {
          for await (const event of api.events.stream(run.id, {
            reconnect: { retries: 100, minDelayMs: 100 },
          }))
            if (!event.live) seen.push(event.sequence);
          return { run, seen };
        } catch (error) {
          return { run, seen, error: String(error) };
        }
      })();
    let lastKill = Date.now();
    for (let k = 0; k < kills; k++) {
      const batch = await submitBatch(api, `api${k}`, quick ? 10 : 20);
      runs.push(...batch);
      follows.push(...batch.map(follow));
      await sleep(1200);
      const killed = current;
      await kill9(apis[killed] as Proc);
      lastKill = Date.now();
      current = 1 - current;
      lb.to(apis[current]?.port ?? 0);
      apis[killed] = await start(s, "serve");
    }
    const settled = await settle(s, runs, 300_000);
    const recovery = settled === null ? null : (Date.now() - lastKill) / 1000;
    const followed = await Promise.race([Promise.all(follows), sleep(120_000).then(() => undefined)]);
    const t = await tally(s, api, runs);
    let streamsChecked = 0;
    if (!followed) {
      const open = await statuses(s, runs);
      t.lostRecords++;
      t.problems.push(
        `followers' streams did not end within 120 s of the batch settling (${[...open.values()].join(",")})`,
      );
    } else {
      for (const { run, seen, error } of followed) {
        const stored: number[] = [];
        for await (const event of api.events.listAll(run.id)) stored.push(event.sequence);
        streamsChecked++;
        if (error || JSON.stringify(seen) !== JSON.stringify(stored)) {
          t.lostRecords++;
          t.problems.push(
            `run ${run.id}: the follower saw ${seen.join(",")}${error ? ` then failed (${error})` : ""}, the store holds ${stored.join(",")}`,
          );
        }
      }
    }
    return {
      drill: "kill-api",
      quick,
      fault: `kill -9 of the API process serving every follower's SSE stream, ${kills} times; the balancer moves to the other`,
      start: started.toISOString(),
      end: new Date().toISOString(),
      recoverySeconds: recovery,
      ...t,
      details: { kills, followers: follows.length, streamsChecked, resumedWithLastEventId: lb.resumed() },
      ok:
        recovery !== null &&
        followed !== undefined &&
        lb.resumed() > 0 &&
        t.lostRecords === 0 &&
        t.duplicatedEffects === 0,
    };
  } finally {
    lb.close();
    await teardown(s);
  }
}
