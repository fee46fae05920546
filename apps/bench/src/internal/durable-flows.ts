// The workflows the durable bench runs, in-process and in its worker processes.
import { setTimeout as sleep } from "node:timers/promises";
import { defineWorkflow, type WorkflowBuilder } from "@openrath/runtime-durable";
import { chain } from "./durable-fixtures.js";

/** `one` (a one-step run) and `slow` (40 steps of 25 ms, for the restart measurement). */
export function benchFlows(): WorkflowBuilder[] {
  const slow = defineWorkflow("slow");
  for (let i = 0; i < 40; i++) {
    slow.step(
      `s${i}`,
      async (s, ctx) => {
        await sleep(25, undefined, { signal: ctx.signal });
        return s.append({ kind: "assistant", content: `slow ${i}` });
      },
      { entry: i === 0, ...(i < 39 ? { next: `s${i + 1}` } : {}) },
    );
  }
  return [chain("one", 1), slow];
}
