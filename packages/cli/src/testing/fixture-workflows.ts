// Workflows for `openrath serve --workflows` and `openrath worker --workflows` in tests.
import type { Session } from "@openrath/core";
import { defineWorkflow, type StepContext } from "@openrath/runtime-durable";

export const greet = defineWorkflow("greet").step(
  "answer",
  async (session: Session) => session.append({ kind: "assistant", content: "hello from greet" }),
  { entry: true },
);

/** Not a workflow: `--workflows` registers only the exports that are. */
export const notAWorkflow = { name: "nothing" };

/** Stores `TICKS` events per step with a pause between them, over three steps: a run to cut mid-way. */
const ticks = (step: string) => async (session: Session, ctx: StepContext) => {
  for (let i = 1; i <= 5; i++) {
    await ctx.emit("tick", { step, i });
    await new Promise((resolve) => setTimeout(resolve, 120));
  }
  return session.append({ kind: "assistant", content: `${step} done` });
};

export const ticker = defineWorkflow("ticker")
  .step("one", ticks("one"), { entry: true, next: "two" })
  .step("two", ticks("two"), { next: "three" })
  .step("three", ticks("three"));

/** Logs through the step's logger, with a content field the logs must redact. */
export const talker = defineWorkflow("talker").step(
  "answer",
  async (session: Session, ctx: StepContext) => {
    ctx.logger.info("drafting the answer", {
      chunks: session.chunks.length,
      content: "PLANTED-CONTENT-7f3a",
    });
    ctx.logger.debug("a debug detail", { step: ctx.stepId });
    return session.append({ kind: "assistant", content: "hello from talker" });
  },
  { entry: true },
);
