import { appendFile } from "node:fs/promises";
import { Agent, defineTool, ScriptedProvider, type ScriptedTurn } from "@openrath/core";
import { defineWorkflow, type WorkflowBuilder } from "@openrath/runtime-durable";

/** The task the example's run starts with. */
export const TASK = "Send the March invoice (EUR 1,240) to ana@example.com.";

/**
 * The model's side, scripted (no API key): first it asks to send the email; once the tool result
 * is in, it reports what happened — sent, or what the reviewer said when rejecting it.
 */
export function scriptedAssistant(): ScriptedProvider {
  return new ScriptedProvider((request): ScriptedTurn => {
    const result = request.messages.find((m) => m.role === "tool");
    if (!result) {
      return {
        toolCalls: [
          {
            id: "send_invoice",
            name: "send_email",
            arguments: {
              to: "ana@example.com",
              subject: "Invoice March",
              body: "Please find the March invoice: EUR 1,240.",
            },
          },
        ],
      };
    }
    const outcome = JSON.parse(String(result.content)) as {
      ok?: boolean;
      message?: string;
      sent_to?: string;
    };
    return outcome.ok === false
      ? { text: `I did not send the invoice. ${outcome.message ?? ""}`.trim() }
      : { text: `Sent the invoice to ${outcome.sent_to}.` };
  });
}

/**
 * The `send_email` tool: non-idempotent (a second send is a second email) and approved by a human
 * before every call. "Sending" appends a line to `outbox` — the side effect the example shows
 * happens exactly once.
 */
export function sendEmail(outbox: string) {
  return defineTool<{ to: string; subject: string; body: string }>({
    name: "send_email",
    description: "Send an email",
    parameters: {
      type: "object",
      properties: { to: { type: "string" }, subject: { type: "string" }, body: { type: "string" } },
      required: ["to", "subject", "body"],
      additionalProperties: false,
    },
    effect: "non_idempotent",
    needsApproval: true,
    async execute(args) {
      await appendFile(outbox, `${JSON.stringify({ ...args, at: new Date().toISOString() })}\n`);
      return { sent_to: args.to, subject: args.subject };
    },
  });
}

/** The durable workflow: one step, the assistant with its send tool. */
export function approvalWorkflow(outbox: string): WorkflowBuilder {
  const assistant = new Agent({
    name: "assistant",
    instructions: "You send emails for the user, with their approval.",
    provider: scriptedAssistant(),
    tools: [sendEmail(outbox)],
  });
  return defineWorkflow("send-with-approval").step("assist", (session, ctx) => assistant.run(session, ctx), {
    entry: true,
  });
}
