// The runtime-durable README example, as a script: `pnpm --filter @openrath/examples durable-support [dataDir]`.
// Run it twice with the same data directory: the second submission has the same idempotency key,
// so it returns the first run (already succeeded) instead of starting another.
import { Session } from "@openrath/core";
import {
  createDurableRuntime,
  DurableWorkflow,
  router,
  type StepContext,
  step,
} from "@openrath/runtime-durable";
import { pgliteStore } from "@openrath/store-postgres";

/** The user's question: the first user message of the session. */
const question = (session: Session) => session.messages().find((m) => m.role === "user")?.content ?? "";

export class Support extends DurableWorkflow {
  @step({ entry: true, next: "route", retry: { maxAttempts: 3 } })
  async triage(session: Session, ctx: StepContext) {
    ctx.logger.info("triage", { attempt: ctx.attempt });
    return session.append({
      kind: "assistant",
      content: question(session).includes("refund") ? "refund" : "question",
    });
  }

  @router({ successors: ["refund", "answer"] })
  route(session: Session) {
    return session.text() === "refund" ? "refund" : "answer";
  }

  @step() async refund(session: Session) {
    return session.append({ kind: "assistant", content: "refunded" });
  }

  @step() async answer(session: Session) {
    return session.append({ kind: "assistant", content: "answered" });
  }
}

const runtime = createDurableRuntime({
  store: await pgliteStore({ dataDir: process.argv[2] ?? ".openrath/db" }),
});
await runtime.register(new Support());
await runtime.worker({ concurrency: 8 }).start();
// SIGTERM or Ctrl-C: the steps in flight finish and commit, their runs go back to the queue.
runtime.closeOnSignals();
const run = await runtime.submit("Support", Session.fromUserMessage("I want a refund"), {
  idempotencyKey: "ticket-42",
});
console.log(run.id, (await runtime.result(run.id)).text());
// Stops the worker and closes the store, so the process exits.
await runtime.close();
