import { Session } from "@openrath/core";
import {
  createDurableRuntime,
  type DurableRuntime,
  type DurableWorker,
  defineWorkflow,
  type FollowedEvent,
  type StepContext,
} from "@openrath/runtime-durable";
import type { RunStoreV1 } from "@openrath/runtime-durable/store";
import { expect } from "vitest";
import { describeGroup } from "../internal/describe-group.js";
import { closeable, type SignalsFixture, type SignalsSuiteContext, until } from "./suite-context.js";

type Resource = { close(): Promise<void> };

let counter = 0;
const uniqueName = (what: string) => `signals-${what}-${process.pid}-${++counter}`;

/** Counts every store call made through the returned view. */
function counting(store: RunStoreV1): { store: RunStoreV1; calls: string[] } {
  const calls: string[] = [];
  const view = new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls.push(String(key));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: view, calls };
}

/** A promise with its resolver, for steps the test releases. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

async function collect(events: AsyncIterable<FollowedEvent>): Promise<FollowedEvent[]> {
  const out: FollowedEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

const stored = (events: readonly FollowedEvent[]) => events.filter((e) => !("live" in e));
const live = (events: readonly FollowedEvent[]) => events.filter((e) => "live" in e);

/**
 * The signals in the runtime: an idle worker woken by a submit (not by its safety sweep) and
 * making no store calls while idle; cancel as a kill switch; a late subscriber that reads the
 * stored events first and then the live ones, with no gap and no duplicate, in this process and
 * in another one; live events fanned out to every subscriber.
 */
export function runtimeSuite(context: SignalsSuiteContext): void {
  describeGroup<Resource>(context, "runtime", "runtime resource", (group) => {
    const keep = <R extends Resource>(resource: R): R => {
      group.track(resource);
      return resource;
    };
    const open = async (): Promise<SignalsFixture> => keep(closeable(await context.create()));
    const start = async (runtime: DurableRuntime, options: { leaseMs?: number } = {}) => {
      const worker = runtime.worker({ concurrency: 4, leaseMs: options.leaseMs ?? 30_000 });
      await worker.start();
      group.track({ close: () => worker.stop({ drain: false }) });
      return worker;
    };

    group.test("an idle worker is woken by a submit, long before its safety sweep", async () => {
      const { store, signals } = await open();
      const runtime = createDurableRuntime({ store, signals });
      let startedAt = 0;
      const flow = defineWorkflow(uniqueName("wake")).step(
        "only",
        (s) => {
          startedAt = Date.now();
          return s.append({ kind: "assistant", content: "woken" });
        },
        { entry: true },
      );
      await runtime.register(flow);
      // A 30 s lease: the worker's sweep (which also looks for work) comes every 10 s.
      await start(runtime, { leaseMs: 30_000 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      const submittedAt = Date.now();
      const run = await runtime.submit(flow.name, Session.fromUserMessage("wake up"));
      await until(() => startedAt > 0, "the run to start", 8_000);
      expect(startedAt - submittedAt).toBeLessThan(5_000);
      expect((await runtime.wait(run.id)).status).toBe("succeeded");
    });

    group.test("an idle worker makes no store calls between safety sweeps", async () => {
      const fixture = await open();
      const { store, calls } = counting(fixture.store);
      const runtime = createDurableRuntime({ store, signals: fixture.signals });
      const flow = defineWorkflow(uniqueName("idle")).step(
        "only",
        (s) => s.append({ kind: "assistant", content: "done" }),
        { entry: true },
      );
      await runtime.register(flow);
      await start(runtime, { leaseMs: 30_000 });
      await until(() => calls.includes("claim"), "the first claim");
      await new Promise((resolve) => setTimeout(resolve, 100));
      calls.length = 0;
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(calls, "store calls made by an idle worker within 1.5 s").toEqual([]);
      // Submitted elsewhere (a runtime without workers): the run is queued, and the signal wakes the worker to claim it.
      const submitter = createDurableRuntime({ store: fixture.store, signals: fixture.signals });
      await submitter.register(flow);
      const run = await submitter.submit(flow.name, Session.fromUserMessage("now work"));
      expect(run.status).toBe("queued");
      expect((await runtime.wait(run.id)).status).toBe("succeeded");
      expect(calls).toContain("claim");
    });

    group.test("cancel aborts the running step's signal through the cancel signal", async () => {
      const { store, signals } = await open();
      const runtime = createDurableRuntime({ store, signals });
      const entered = gate();
      let abortedAt = 0;
      let reason: unknown;
      const flow = defineWorkflow(uniqueName("cancel")).step(
        "hang",
        async (s, ctx: StepContext) => {
          entered.open();
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, 25_000);
            ctx.signal.addEventListener("abort", () => {
              abortedAt = Date.now();
              reason = ctx.signal.reason;
              clearTimeout(timer);
              resolve();
            });
          });
          return s;
        },
        { entry: true },
      );
      await runtime.register(flow);
      // Heartbeats every 10 s: an abort within a few seconds came through the cancel signal.
      await start(runtime, { leaseMs: 30_000 });
      const run = await runtime.submit(flow.name, Session.fromUserMessage("never ends"));
      await entered.promise;
      const cancelledAt = Date.now();
      await runtime.cancel(run.id, "the user changed their mind");
      await until(() => abortedAt > 0, "the step's signal to abort", 8_000);
      expect(abortedAt - cancelledAt).toBeLessThan(5_000);
      expect((reason as { code?: string }).code).toBe("cancelled");
      expect((await runtime.wait(run.id)).status).toBe("cancelled");
    });

    const lateSubscriber = (where: "this process" | "another process") =>
      group.test(
        `a late subscriber in ${where} reads the stored events first, then the live ones, with no gap and no duplicate`,
        async () => {
          const fixture = await open();
          const runtime = createDurableRuntime(fixture);
          const watcher =
            where === "this process" ? runtime : createDurableRuntime(keep(closeable(await context.peer!())));
          const halfway = gate();
          const resume = gate();
          const flow = defineWorkflow(uniqueName("late")).step(
            "talk",
            async (s, ctx: StepContext) => {
              for (let i = 0; i < 5; i++) await ctx.emit("step.note", { i });
              halfway.open();
              await resume.promise;
              for (let i = 5; i < 10; i++) {
                ctx.emitLive("token.delta", { text: `t${i}` });
                await ctx.emit("step.note", { i });
                ctx.emitLive("token.delta", { text: `u${i}` });
              }
              return s.append({ kind: "assistant", content: "said it all" });
            },
            { entry: true },
          );
          await runtime.register(flow);
          await start(runtime);
          const run = await runtime.submit(flow.name, Session.fromUserMessage("talk to me"));
          await halfway.promise;
          // Joins after five stored events exist; subscribed before the step goes on.
          const iterator = watcher.stream(run.id)[Symbol.asyncIterator]();
          const first = await iterator.next();
          const rest = (async () => {
            const out: FollowedEvent[] = first.done ? [] : [first.value];
            for (;;) {
              const next = await iterator.next();
              if (next.done) return out;
              out.push(next.value);
            }
          })();
          await new Promise((resolve) => setTimeout(resolve, 100));
          resume.open();
          const events = await rest;
          const all = await fixture.store.readEvents(run.id);
          const seqs = stored(events).map((e) => (e as { seq: number }).seq);
          expect(seqs, "every stored event exactly once, in order").toEqual(all.map((e) => e.seq));
          expect(all.length).toBeGreaterThanOrEqual(12);
          const notes = stored(events).filter((e) => e.type === "step.note");
          expect(notes.map((e) => (e.data as { i: number }).i)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
          if (context.capabilities.livePayloads) {
            const deltas = live(events).map((e) => (e.data as { text: string }).text);
            expect(deltas, "every live event after joining, once, in order").toEqual(
              [5, 6, 7, 8, 9].flatMap((i) => [`t${i}`, `u${i}`]),
            );
            // Each live event comes after the stored event it follows.
            let lastSeq = 0;
            for (const event of events) {
              if ("live" in event) expect(event.after).toBeLessThanOrEqual(lastSeq);
              else lastSeq = event.seq;
            }
          } else {
            expect(live(events)).toEqual([]);
          }
        },
      );
    lateSubscriber("this process");
    if (context.peer && context.capabilities.crossProcess) lateSubscriber("another process");
    else
      group.skip(
        "a late subscriber in another process reads the stored events first, then the live ones, with no gap and no duplicate",
        context.capabilities.crossProcess ? "no peer given" : "the backend is in-process",
      );

    if (context.capabilities.livePayloads) {
      group.test("live events reach every subscriber of the run", async () => {
        const fixture = await open();
        const runtime = createDurableRuntime(fixture);
        const peer =
          context.peer && context.capabilities.crossProcess
            ? createDurableRuntime(keep(closeable(await context.peer())))
            : undefined;
        const resume = gate();
        const flow = defineWorkflow(uniqueName("fanout")).step(
          "stream",
          async (s, ctx: StepContext) => {
            await resume.promise;
            for (let i = 0; i < 50; i++) ctx.emitLive("token.delta", { i });
            await ctx.emit("step.note", { done: true });
            return s;
          },
          { entry: true },
        );
        await runtime.register(flow);
        const worker: DurableWorker = await start(runtime);
        const run = await runtime.submit(flow.name, Session.fromUserMessage("stream"));
        await until(() => worker.activeRuns.includes(run.id), "the run to start");
        const watchers = [runtime, runtime, runtime, ...(peer ? [peer, peer] : [])];
        const streams = watchers.map((w) => collect(w.stream(run.id)));
        // Every stream has subscribed once it has read the stored events so far.
        await new Promise((resolve) => setTimeout(resolve, 300));
        resume.open();
        for (const events of await Promise.all(streams)) {
          expect(live(events).map((e) => (e.data as { i: number }).i)).toEqual(
            Array.from({ length: 50 }, (_, i) => i),
          );
        }
      });
    } else {
      group.skip("live events reach every subscriber of the run", "the backend carries no live payloads");
    }
  });
}
