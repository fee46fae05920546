// The workflows `bench:server` runs, given to `openrath serve | worker --workflows` and registered
// in-process too: every export is a workflow (the command registers each one it finds).
import { setTimeout as sleep } from "node:timers/promises";
import { defineWorkflow } from "@openrath/runtime-durable";
import { chain } from "./durable-fixtures.js";

/** A one-step run: the throughput workload. */
export const one = chain("one", 1);

/** How long `ticker` holds before its first tick, so every follower is connected by then. */
export const TICKER_HOLD_MS = 6_000;
export const TICKER_TICKS = 20;
export const TICKER_TICK_MS = 250;

/** A hold, then 20 steps of 250 ms: a run whose events arrive over several seconds. */
export const ticker = defineWorkflow("ticker").step(
  "hold",
  async (s, ctx) => {
    await sleep(TICKER_HOLD_MS, undefined, { signal: ctx.signal });
    return s;
  },
  { entry: true, next: "t0" },
);
for (let i = 0; i < TICKER_TICKS; i++) {
  ticker.step(
    `t${i}`,
    async (s, ctx) => {
      await sleep(TICKER_TICK_MS, undefined, { signal: ctx.signal });
      return s.append({ kind: "assistant", content: `tick ${i}` });
    },
    i + 1 < TICKER_TICKS ? { next: `t${i + 1}` } : {},
  );
}
