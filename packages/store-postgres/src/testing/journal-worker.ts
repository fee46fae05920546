/**
 * A worker process for the journal's kill tests:
 * `journal-worker <url> <schema> <workerId> <leaseMs> <mode> <hang>`.
 *
 * - mode `agent`: the reference ten-turn agent (`journal-agent.ts`). Every live provider call and
 *   tool execution is logged (in `journal_log`, before it goes on) and announced on stdout as
 *   `at <runId> <what> <turn>`; the `record` tool applies its effect to `journal_outbox` by its
 *   idempotency key, as a service honouring the key would.
 * - mode `send-non_idempotent` / `send-idempotent`: an agent that sends one message; with `hang` 1
 *   the send logs itself and then never returns (the parent kills the process mid-call).
 *
 * Prints `ready <plan hash>` once it is claiming; runs until killed.
 */
import { Agent, defineTool, ScriptedProvider } from "@openrath/core";
import { createDurableRuntime, defineWorkflow } from "@openrath/runtime-durable";
import pg from "pg";
import { postgresStore } from "../postgres-store.js";
import { referenceAgent } from "./journal-agent.js";

const [url, schema, workerId, leaseMs, mode, hang] = process.argv.slice(2);
const log = new pg.Pool({ connectionString: url, max: 3 });
log.on("error", () => {});
let current = "";

async function note(what: string, turn: number): Promise<void> {
  await log.query("insert into journal_log (run_id, worker, pid, what, turn) values ($1, $2, $3, $4, $5)", [
    current,
    workerId,
    process.pid,
    what,
    turn,
  ]);
  process.stdout.write(`at ${current} ${what} ${turn}\n`);
}

function agentFlow() {
  const agent = referenceAgent({
    modelDelayMs: 40,
    toolDelayMs: 20,
    onModel: (turn) => note("model", turn),
    onTool: async (name, turn, key) => {
      await note(name, turn);
      if (name === "record")
        await log.query("insert into journal_outbox (run_id, key) values ($1, $2) on conflict do nothing", [
          current,
          key,
        ]);
    },
  });
  return defineWorkflow("journaled-agent").step(
    "agent",
    (session, ctx) => {
      current = ctx.runId;
      return agent.run(session, ctx);
    },
    { entry: true },
  );
}

function sendFlow(effect: "non_idempotent" | "idempotent") {
  const send = defineTool<{ to: string }>({
    name: "send",
    description: "Send a message",
    parameters: { type: "object", properties: { to: { type: "string" } }, required: ["to"] },
    effect,
    ...(effect === "idempotent" ? { idempotencyKey: (args: { to: string }) => `send-${args.to}` } : {}),
    execute: async ({ to }) => {
      await note("send", 1);
      if (hang === "1") await new Promise(() => {});
      return { sent: to, by: workerId };
    },
  });
  const agent = new Agent({
    name: "sender",
    tools: [send],
    provider: new ScriptedProvider((request) =>
      request.messages.some((m) => m.role === "tool")
        ? { text: "sent" }
        : { toolCalls: [{ name: "send", arguments: { to: "ana" }, id: "send_1" }] },
    ),
  });
  return defineWorkflow(`send-${effect}`).step(
    "send",
    (session, ctx) => {
      current = ctx.runId;
      return agent.run(session, ctx);
    },
    { entry: true },
  );
}

// Named by pid, so a test can wait for this process's backends to be gone after killing it.
const store = await postgresStore({
  connectionString: url!,
  schema: schema!,
  pool: { max: 6, application_name: `journal-worker-${process.pid}` },
});
const runtime = createDurableRuntime({ store });
const flow =
  mode === "agent" ? agentFlow() : sendFlow(mode === "send-idempotent" ? "idempotent" : "non_idempotent");
const plan = await runtime.register(flow);
const worker = runtime.worker({ workerId: workerId!, leaseMs: Number(leaseMs), concurrency: 1 });
await worker.start();
process.stdout.write(`ready ${plan.hash}\n`);
