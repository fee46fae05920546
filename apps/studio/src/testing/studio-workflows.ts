// Workflows for the Studio browser test's `openrath serve --workflows`: the demo's two (the MAMS
// team, a review that waits for an approval) and a mailer whose send is cut off mid-call.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Agent, defaultRegistry, defineTool, ScriptedProvider } from "@openrath/core";
import { scriptedBrain } from "@openrath/demo";
import { DurableMamsWorkflow, reviewWorkflow } from "@openrath/demo/durable";
import { defineWorkflow } from "@openrath/runtime-durable";
import { localSandbox } from "@openrath/sandbox-local";

const state = process.env.OPENRATH_STATE ?? ".openrath";
const registry = defaultRegistry();
if (!registry.has("sandbox", "local")) registry.registerSandbox(localSandbox());

export const mams = new DurableMamsWorkflow(
  scriptedBrain(),
  { workspace: join(state, "demo-workspace") },
  300,
);
export const review = reviewWorkflow;

/**
 * A non-idempotent send that kills its own process the first time it runs (a marker file in the
 * state directory remembers): the outcome is unknown, so the next worker puts it under review.
 */
const sendInvoice = defineTool<{ to: string }>({
  name: "send_invoice",
  description: "Send the invoice",
  parameters: {
    type: "object",
    properties: { to: { type: "string" } },
    required: ["to"],
    additionalProperties: false,
  },
  effect: "non_idempotent",
  async execute(args) {
    const marker = join(state, "send-cut-off");
    if (!existsSync(marker)) {
      writeFileSync(marker, "1");
      process.kill(process.pid, "SIGKILL");
      await new Promise(() => undefined);
    }
    return { sent_to: args.to };
  },
});

const mailerAgent = new Agent({
  name: "mailer",
  instructions: "You send invoices.",
  provider: new ScriptedProvider((request) =>
    request.messages.some((m) => m.role === "tool")
      ? { text: "Sent the invoice." }
      : { toolCalls: [{ id: "send_1", name: "send_invoice", arguments: { to: "ana@example.com" } }] },
  ),
  tools: [sendInvoice],
});

export const mailer = defineWorkflow("mailer").step("send", (session, ctx) => mailerAgent.run(session, ctx), {
  entry: true,
});

/** Asks the operator for a shipping choice through a form: an input with a JSON Schema. */
export const intake = defineWorkflow("intake").step(
  "ask",
  async (session, ctx) => {
    const decision = await ctx.interrupt({
      kind: "input",
      request: { question: "How should the order ship?" },
      schema: {
        type: "object",
        properties: {
          carrier: { type: "string", enum: ["post", "courier"] },
          days: { type: "integer", description: "Days until it must arrive" },
          insured: { type: "boolean" },
        },
        required: ["carrier", "days"],
        additionalProperties: false,
      },
    });
    return session.append({
      kind: "assistant",
      author: "intake",
      content: `Shipping: ${JSON.stringify(decision.payload)}`,
    });
  },
  { entry: true },
);
