import type { FollowedEvent, RunEvent } from "@openrath/runtime-durable";
import { describe, expect, it, vi } from "vitest";
import { FollowerLagged, type FollowSource, followSourceOf, RunFollowers } from "./run-followers.js";
import { serverHarness } from "./testing/harness.js";

const RUN = "run-1";
const TENANT = "default";

/** A run's event log in memory, with the runtime's follow over it; counts follows and store reads. */
function fakeRun() {
  const stored: RunEvent[] = [];
  const wakes = new Set<() => void>();
  const counts = { streams: 0, reads: 0, open: 0 };
  const source: FollowSource = {
    store: {
      async readEvents(_runId, options = {}) {
        counts.reads++;
        return stored.filter((event) => event.seq > (options.after ?? 0)).slice(0, options.limit ?? 1000);
      },
    },
    stream: async function* (_runId, options = {}) {
      counts.streams++;
      counts.open++;
      let last = options.after ?? 0;
      try {
        for (;;) {
          options.signal?.throwIfAborted();
          const next = stored.find((event) => event.seq > last);
          if (next) {
            last = next.seq;
            yield next;
            if ((next.data as { to?: string }).to === "succeeded") return;
            continue;
          }
          await new Promise<void>((resolve) => {
            wakes.add(resolve);
            const signal = options.signal;
            const aborted = () => resolve();
            signal?.addEventListener("abort", aborted, { once: true });
            wakes.add(() => signal?.removeEventListener("abort", aborted));
          });
        }
      } finally {
        counts.open--;
      }
    } as FollowSource["stream"],
  };
  const write = (data: { to?: string } = {}) => {
    stored.push({
      runId: RUN,
      seq: stored.length + 1,
      type: data.to ? "run.state.changed" : "step.progress",
      data,
      at: 0,
    });
    for (const wake of [...wakes]) wake();
    wakes.clear();
  };
  return { source, counts, write, stored };
}

/** Pulls `count` events (or to the end) from a follow. */
async function take(
  events: AsyncGenerator<FollowedEvent>,
  count = Number.POSITIVE_INFINITY,
): Promise<number[]> {
  const seqs: number[] = [];
  while (seqs.length < count) {
    const next = await events.next();
    if (next.done) break;
    if (!("live" in next.value)) seqs.push(next.value.seq);
  }
  return seqs;
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe("followers of one run", () => {
  it("share one follow of the store: twenty followers open one stream and, once joined, read the store no more; each gets every event once", async () => {
    const { source, counts, write } = fakeRun();
    const followers = new RunFollowers(source);
    write();
    write();
    const streams = Array.from({ length: 20 }, (_, i) =>
      take(followers.follow(RUN, { after: i % 3, tenantId: TENANT })),
    );
    await tick();
    // One catch-up read per joining follower, then none however many events follow.
    const joinReads = counts.reads;
    expect(joinReads).toBeLessThanOrEqual(20);
    for (let i = 0; i < 30; i++) {
      write();
      await tick();
    }
    write({ to: "succeeded" });
    const got = await Promise.all(streams);
    expect(got).toEqual(got.map((_, i) => range((i % 3) + 1, 33)));
    expect(counts.streams).toBe(1);
    expect(counts.reads).toBe(joinReads);
    expect(followers.size).toBe(0);
  });

  it("let a follower behind the shared buffer read its gap from the store, then join with no gap and no duplicate while events keep coming", async () => {
    const { source, counts, write } = fakeRun();
    const followers = new RunFollowers(source, { bufferSize: 2, queueSize: 100 });
    const first = followers.follow(RUN, { after: 0, tenantId: TENANT });
    const head = take(first, 20);
    await tick();
    for (let i = 0; i < 20; i++) write();
    expect(await head).toEqual(range(1, 20));
    // Joins at 3 with events being written as it reads.
    const late = followers.follow(RUN, { after: 3, tenantId: TENANT });
    const lateSeqs: number[] = [];
    // Reads faster than events come, so it catches up and joins; then one event at a time.
    for (let i = 0; i < 8; i++) {
      write();
      lateSeqs.push(...(await take(late, 3)));
    }
    for (let i = 0; i < 5; i++) {
      write();
      lateSeqs.push(...(await take(late, 1)));
    }
    write({ to: "succeeded" });
    lateSeqs.push(...(await take(late)));
    expect(lateSeqs).toEqual(range(4, 34));
    expect(await take(first)).toEqual(range(21, 34));
    expect(counts.reads).toBeGreaterThan(0);
    expect(counts.streams).toBe(1);
  });

  it("end a slow follower whose queue overflows, without holding up the others; it resumes from its last event", async () => {
    const { source, write } = fakeRun();
    const followers = new RunFollowers(source, { bufferSize: 2, queueSize: 3 });
    const fast = followers.follow(RUN, { after: 0, tenantId: TENANT });
    const slow = followers.follow(RUN, { after: 0, tenantId: TENANT });
    const fastFirst = take(fast, 1);
    const slowFirst = take(slow, 1);
    await tick();
    write();
    expect(await slowFirst).toEqual([1]);
    expect(await fastFirst).toEqual([1]);
    const fastSeqs: number[] = [];
    for (let i = 0; i < 9; i++) {
      write();
      fastSeqs.push(...(await take(fast, 1)));
    }
    expect(fastSeqs).toEqual(range(2, 10));
    await expect(slow.next()).rejects.toBeInstanceOf(FollowerLagged);
    write({ to: "succeeded" });
    expect(await take(fast)).toEqual([11]);
    expect(await take(followers.follow(RUN, { after: 1, tenantId: TENANT }))).toEqual(range(2, 11));
  });

  it("end a parked follower at the park and the others at the run's end, and stop the shared follow when its last follower leaves", async () => {
    const { source, counts, write } = fakeRun();
    const followers = new RunFollowers(source);
    const parked = take(followers.follow(RUN, { after: 0, tenantId: TENANT, parked: true }));
    const whole = followers.follow(RUN, { after: 0, tenantId: TENANT });
    const wholeHead = take(whole, 3);
    await tick();
    write();
    write({ to: "waiting" });
    write();
    expect(await parked).toEqual([1, 2]);
    expect(await wholeHead).toEqual([1, 2, 3]);
    // A parked follower of a parked run it has caught up with ends at once, with no follow.
    const run = { status: "waiting" as const, eventSeq: 3 };
    expect(await take(followers.follow(RUN, { after: 3, tenantId: TENANT, parked: true, run }))).toEqual([]);
    expect(counts.streams).toBe(1);
    await whole.return(undefined);
    await tick();
    expect(followers.size).toBe(0);
    expect(counts.open).toBe(0);
  });

  it("start the shared follow with no store read of their own when the caller's read of the active run shows a backlog the buffer holds; read an ended run from the store with no follow", async () => {
    const { source, counts, write } = fakeRun();
    const followers = new RunFollowers(source, { bufferSize: 3, queueSize: 10 });
    write();
    write();
    write();
    const running = { status: "running" as const, eventSeq: 3 };
    const first = followers.follow(RUN, { after: 0, tenantId: TENANT, run: running });
    const second = followers.follow(RUN, { after: 1, tenantId: TENANT, run: running });
    const heads = [take(first, 3), take(second, 2)];
    await tick();
    expect(counts.reads).toBe(0);
    write({ to: "succeeded" });
    expect(await Promise.all(heads)).toEqual([range(1, 3), range(2, 3)]);
    expect([await take(first), await take(second)]).toEqual([[4], [4]]);
    expect(counts.streams).toBe(1);
    // More behind than the buffer holds: its gap comes from the store first.
    const behind = new RunFollowers(source, { bufferSize: 2, queueSize: 10 });
    expect(await take(behind.follow(RUN, { after: 0, tenantId: TENANT, run: running }))).toEqual(range(1, 4));
    expect(counts.reads).toBe(1);
    // An ended run: what is left is read, and no follow starts.
    const ended = { status: "succeeded" as const, eventSeq: 4 };
    expect(await take(followers.follow(RUN, { after: 2, tenantId: TENANT, run: ended }))).toEqual([3, 4]);
    expect(counts.reads).toBe(2);
    // Both read to the run's end from the store, so neither started a follow.
    expect(counts.streams).toBe(1);
  });

  it("end every follower when closed, and a follower whose signal fires", async () => {
    const { source, write } = fakeRun();
    const followers = new RunFollowers(source);
    const abort = new AbortController();
    const aborted = take(followers.follow(RUN, { after: 0, tenantId: TENANT, signal: abort.signal }));
    const open = take(followers.follow(RUN, { after: 0, tenantId: TENANT }));
    await tick();
    write();
    abort.abort(new Error("client went away"));
    await expect(aborted).rejects.toThrow("client went away");
    followers.close();
    expect(await open).toEqual([1]);
  });
});

const harness = serverHarness();

describe("followers of a real run", () => {
  it("read the store once per signal however many follow: after joining, twenty followers make fewer reads than followers", async () => {
    const { app, runtime } = await harness.setup();
    const run = (
      await app.inject({ method: "POST", url: "/v1/runs", payload: { assistant: "approval", input: "go" } })
    ).json();
    const parked = await runtime.wait(run.id, { onPark: "return" });
    const store = runtime.store;
    const readEvents = store.readEvents.bind(store);
    let reads = 0;
    store.readEvents = (...args) => {
      reads++;
      return readEvents(...args);
    };
    // As the server makes them: the runtime's follow without a second tenant check.
    const followers = new RunFollowers(followSourceOf(runtime));
    const streams = Array.from({ length: 20 }, (_, i) =>
      take(followers.follow(run.id, { after: i % 2 === 0 ? 0 : parked.eventSeq, tenantId: TENANT })),
    );
    // Each follower's catch-up read, and the shared follow's first.
    await vi.waitFor(() => expect(reads).toBeGreaterThanOrEqual(21));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const joinReads = reads;
    const inbox = (await app.inject({ method: "GET", url: "/v1/interrupts" })).json();
    await app.inject({
      method: "POST",
      url: `/v1/interrupts/${inbox.items[0].id}/decision`,
      payload: { kind: "approve" },
    });
    const done = await runtime.wait(run.id);
    const got = await Promise.all(streams);
    expect(got).toEqual(got.map((_, i) => range(i % 2 === 0 ? 1 : parked.eventSeq + 1, done.eventSeq)));
    // A follow per follower would read at least once each after the decision.
    expect(reads - joinReads).toBeLessThan(20);
    expect(followers.size).toBe(0);
  });
});
