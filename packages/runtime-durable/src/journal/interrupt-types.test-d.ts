import type { Agent, ToolInterruptDecision, ToolInterruptRequest } from "@openrath/core";
import { expectTypeOf, test } from "vitest";
import type { InterruptDecision, InterruptRequest, StepContext } from "../contract/step-context.js";

test("a tool's ctx.interrupt takes the same request and gives the same decision as a step's", () => {
  expectTypeOf<ToolInterruptRequest>().toEqualTypeOf<InterruptRequest>();
  expectTypeOf<ToolInterruptDecision>().toEqualTypeOf<InterruptDecision>();
});

test("a step context is run options: agent.run(session, ctx) gets the journal's hooks and scope", () => {
  expectTypeOf<StepContext>().toMatchTypeOf<NonNullable<Parameters<Agent["run"]>[1]>>();
});
