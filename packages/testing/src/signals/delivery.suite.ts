import type { Signal } from "@openrath/runtime-durable/store";
import { expect } from "vitest";
import { describeGroup } from "../internal/describe-group.js";
import { closeable, type SignalsSuiteContext, until } from "./suite-context.js";

type Fixture = ReturnType<typeof closeable>;

let counter = 0;
const runId = () =>
  `00000000-0000-4000-8000-${String(++counter).padStart(6, "0")}${process.pid.toString(16).padStart(6, "0").slice(-6)}`;

/** Topics, per-run channels, fan-out, live payloads, unsubscribe, cross-process delivery, close. */
export function deliverySuite(context: SignalsSuiteContext): void {
  describeGroup<Fixture>(context, "delivery", "signals fixture", (group) => {
    const open = async () => group.track(closeable(await context.create()));

    group.test("declares specVersion v1, a name and the capabilities it claims", async () => {
      const { signals } = await open();
      expect(signals.specVersion).toBe("v1");
      expect(typeof signals.name).toBe("string");
      expect(signals.name.length).toBeGreaterThan(0);
      expect(signals.capabilities).toEqual(context.capabilities);
    });

    group.test("a subscription is active when subscribe resolves, on every topic", async () => {
      const { signals } = await open();
      const id = runId();
      const got: Signal[] = [];
      const stops = [
        await signals.subscribe("work", (s) => got.push(s)),
        await signals.subscribe("cancel", (s) => got.push(s)),
        await signals.subscribe(`run:${id}`, (s) => got.push(s)),
      ];
      await signals.publish({ kind: "work", planHash: "a".repeat(64) });
      await signals.publish({ kind: "cancel", runId: id });
      await signals.publish({ kind: "event", runId: id, seq: 7 });
      await until(() => got.length >= 3, "three signals");
      expect(got).toContainEqual({ kind: "work", planHash: "a".repeat(64) });
      expect(got).toContainEqual({ kind: "cancel", runId: id });
      expect(got).toContainEqual({ kind: "event", runId: id, seq: 7 });
      for (const stop of stops) await stop();
    });

    group.test("run channels are per run: a run's subscriber hears only that run", async () => {
      const { signals } = await open();
      const a = runId();
      const b = runId();
      const onA: Signal[] = [];
      const onB: Signal[] = [];
      await signals.subscribe(`run:${a}`, (s) => onA.push(s));
      await signals.subscribe(`run:${b}`, (s) => onB.push(s));
      await signals.publish({ kind: "event", runId: a, seq: 1 });
      await signals.publish({ kind: "event", runId: b, seq: 1 });
      await signals.publish({ kind: "event", runId: a, seq: 2 });
      await until(() => onA.length >= 2 && onB.length >= 1, "both runs' events");
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(onA.every((s) => s.kind === "event" && s.runId === a)).toBe(true);
      expect(onB).toEqual([{ kind: "event", runId: b, seq: 1 }]);
    });

    group.test("every subscriber of a run gets every signal, in publish order", async () => {
      const { signals } = await open();
      const id = runId();
      const lists: number[][] = Array.from({ length: 5 }, () => []);
      for (const list of lists) {
        await signals.subscribe(`run:${id}`, (s) => {
          if (s.kind === "event") list.push(s.seq);
        });
      }
      for (let seq = 1; seq <= 20; seq++) await signals.publish({ kind: "event", runId: id, seq });
      await until(() => lists.every((l) => l.length >= 20), "20 signals on each of 5 subscribers");
      for (const list of lists) expect(list).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    });

    if (context.capabilities.livePayloads) {
      group.test("live payloads arrive intact and in order on every subscriber", async () => {
        const { signals } = await open();
        const id = runId();
        const payloads = Array.from({ length: 30 }, (_, i) => ({
          type: "token.delta",
          data: { text: `tök ${i} 🚀`, index: i, nested: { ok: i % 2 === 0, list: [i, null, "x"] } },
        }));
        const lists: unknown[][] = [[], [], []];
        for (const list of lists) {
          await signals.subscribe(`run:${id}`, (s) => {
            if (s.kind === "event" && s.live !== undefined) list.push(s.live);
          });
        }
        for (const live of payloads) await signals.publish({ kind: "event", runId: id, seq: 3, live });
        await until(() => lists.every((l) => l.length >= payloads.length), "every live payload");
        for (const list of lists) expect(list).toEqual(payloads);
      });
    } else {
      group.skip(
        "live payloads arrive intact and in order on every subscriber",
        "the backend carries no live payloads",
      );
    }

    group.test("heardRuns is there exactly when capabilities.heardRuns is true", async () => {
      const { signals } = await open();
      const declared = signals.capabilities.heardRuns === true;
      expect(signals.heardRuns !== undefined).toBe(declared);
      if (declared) {
        expect(signals.heardRuns!.specVersion).toBe("v1");
        expect(signals.heardRuns!.heard).toBeTypeOf("function");
      }
    });

    if (context.capabilities.heardRuns) {
      group.test(
        "heardRuns tells what it heard end or park a run since a time, and that it may have missed what came before it listened",
        async () => {
          const { signals } = await open();
          const heard = signals.heardRuns!;
          const [ended, parked, running] = [runId(), runId(), runId()];
          const got: Signal[] = [];
          for (const id of [ended, parked, running]) await signals.subscribe(`run:${id}`, (s) => got.push(s));
          const since = performance.now();
          // Before it was made, it was not listening: anything may have been missed.
          expect(heard.heard(ended, 0)).toBeUndefined();
          expect(heard.heard(ended, since)).toBeNull();
          await signals.publish({ kind: "event", runId: running, seq: 2, status: "running" });
          await signals.publish({ kind: "event", runId: parked, seq: 3, status: "waiting" });
          await signals.publish({ kind: "event", runId: ended, seq: 4, status: "succeeded" });
          await until(() => got.length >= 3, "three events");
          expect(heard.heard(ended, since)).toBe("succeeded");
          expect(heard.heard(parked, since)).toBe("waiting");
          // A status that neither ends nor parks the run is not worth remembering.
          expect(heard.heard(running, since)).toBeNull();
        },
      );
    } else
      group.skip("heardRuns tells what it heard end or park a run since a time", "no heardRuns capability");

    group.test("unsubscribing stops delivery to that listener only", async () => {
      const { signals } = await open();
      const id = runId();
      const kept: number[] = [];
      const dropped: number[] = [];
      await signals.subscribe(`run:${id}`, (s) => s.kind === "event" && kept.push(s.seq));
      const stop = await signals.subscribe(`run:${id}`, (s) => s.kind === "event" && dropped.push(s.seq));
      await signals.publish({ kind: "event", runId: id, seq: 1 });
      await until(() => kept.length >= 1 && dropped.length >= 1, "the first signal on both");
      await stop();
      await stop();
      await signals.publish({ kind: "event", runId: id, seq: 2 });
      await until(() => kept.length >= 2, "the second signal on the kept listener");
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(kept).toEqual([1, 2]);
      expect(dropped).toEqual([1]);
    });

    if (context.capabilities.crossProcess && context.peer) {
      const peerOf = context.peer;
      group.test("a signal published in one process reaches subscribers in another", async () => {
        const { signals } = await open();
        const peer = group.track(closeable(await peerOf()));
        const id = runId();
        const here: Signal[] = [];
        const there: Signal[] = [];
        await signals.subscribe(`run:${id}`, (s) => here.push(s));
        await peer.signals.subscribe(`run:${id}`, (s) => there.push(s));
        await peer.signals.subscribe("cancel", (s) => there.push(s));
        await signals.publish({ kind: "event", runId: id, seq: 4 });
        await signals.publish({ kind: "cancel", runId: id });
        await until(() => here.length >= 1 && there.length >= 2, "the signals in both processes");
        expect(there).toContainEqual({ kind: "event", runId: id, seq: 4 });
        expect(there).toContainEqual({ kind: "cancel", runId: id });
      });
    } else {
      group.skip(
        "a signal published in one process reaches subscribers in another",
        context.capabilities.crossProcess ? "no peer given" : "the backend is in-process",
      );
    }

    group.test("close is idempotent; publish and subscribe after close do not throw", async () => {
      const fixture = await open();
      const { signals } = fixture;
      const got: Signal[] = [];
      await signals.subscribe("work", (s) => got.push(s));
      await signals.close();
      await signals.close();
      await expect(signals.publish({ kind: "work" })).resolves.toBeUndefined();
      const stop = await signals.subscribe("work", (s) => got.push(s));
      await stop();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(got).toEqual([]);
    });
  });
}
