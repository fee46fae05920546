import type { RunStoreV1 } from "@openrath/runtime-durable/store";
import { expect } from "vitest";
import { describeGroup } from "../internal/describe-group.js";
import { expectOpenRathError } from "../internal/expect-error.js";
import { claimOne, registeredPlan, submit } from "./fixtures.js";
import type { StoreSuiteContext } from "./suite-context.js";

/** The per-run event log: gap-free under concurrent writers, paged reads, live notification. */
export function eventsSuite(context: StoreSuiteContext): void {
  describeGroup<RunStoreV1>(context, "events", "store", (group) => {
    group.test("concurrent writers get a gap-free, duplicate-free sequence", async () => {
      const store = group.track(await context.create());
      const peer = context.peer ? group.track(await context.peer()) : store;
      const plan = await registeredPlan(store);
      const { run } = await submit(store, plan);
      const claim = await claimOne(store, plan);
      const writes = Array.from({ length: 8 }, (_, writer) =>
        (async () => {
          const seqs: number[] = [];
          for (let i = 0; i < 20; i++)
            seqs.push(
              await (writer % 2 ? peer : store).appendEvent(claim.fence, {
                type: "step.note",
                data: { writer, i },
              }),
            );
          return seqs;
        })(),
      );
      const heartbeats = (async () => {
        for (let i = 0; i < 10; i++) await peer.heartbeat([claim.fence], 30_000);
      })();
      const seqs = (await Promise.all(writes)).flat();
      await heartbeats;
      const final = await store.getRun(run.id);
      const events = await store.readEvents(run.id);
      expect(events.map((e) => e.seq)).toEqual(Array.from({ length: final!.eventSeq }, (_, i) => i + 1));
      expect(new Set(seqs).size).toBe(160);
      expect(events.filter((e) => e.type === "step.note").length).toBe(160);
      const page = await store.readEvents(run.id, { after: 10, limit: 5 });
      expect(page.map((e) => e.seq)).toEqual([11, 12, 13, 14, 15]);
    });

    group.test("event types under run.* are reserved and rejected for callers", async () => {
      const store = group.track(await context.create());
      const plan = await registeredPlan(store);
      await submit(store, plan);
      const claim = await claimOne(store, plan);
      await expectOpenRathError(
        () => store.appendEvent(claim.fence, { type: "run.succeeded" }),
        "invalid_argument",
        "appendEvent(run.*)",
      );
    });

    if (context.capabilities.notifiesOnCommit) {
      group.test("a committed event wakes the run's subscribers, after the commit", async () => {
        const store = group.track(await context.create());
        const plan = await registeredPlan(store);
        const { run } = await submit(store, plan);
        const claim = await claimOne(store, plan);
        const seen: number[] = [];
        let readBack: number | undefined;
        let done!: () => void;
        const got = new Promise<void>((resolve) => {
          done = resolve;
        });
        // The subscription is active once subscribe() resolves: nothing committed after it is missed.
        await store.signals.subscribe(`run:${run.id}`, (signal) => {
          if (signal.kind !== "event") return;
          seen.push(signal.seq);
          store.readEvents(run.id, { after: signal.seq - 1 }).then((events) => {
            readBack = events[0]?.seq;
            done();
          });
        });
        const seq = await store.appendEvent(claim.fence, { type: "step.progress", data: { pct: 50 } });
        await Promise.race([got, new Promise((r) => setTimeout(r, 10_000))]);
        expect(seen).toContain(seq);
        expect(readBack).toBe(seq);
      });
    } else
      group.skip(
        "a committed event wakes the run's subscribers, after the commit",
        "the store does not notify on commit",
      );
  });
}
