/**
 * A worker process for the journal's kill-point tests:
 * `journal-kill-worker <driver> <target> <schema> <workerId> <leaseMs> <service> <key>`, where
 * `driver` is `postgres` (target: a connection string) or `pglite` (target: a data directory).
 *
 * It runs the kill-point agent (eight turns with a slow read-only `search` and an idempotent keyed
 * `note`, then the answer) through @openrath/provider-openai against the fake OpenAI server at
 * `service` (`fake-openai-server.ts`), whose services the tools call. It submits the run under the
 * idempotency key `key` (so every process of a scenario works on the same run: the first one
 * submits it, the others get it back), waits for it to end, prints `done <runId> <status>`, closes
 * the store and exits.
 *
 * `OPENRATH_TEST_KILL_AT=<turn>:<point>` makes the process kill itself with SIGKILL at that point of
 * that turn (printing `kill <turn>:<point>` first):
 * - `model`: in the model request — the server has answered, the reply is read, and the process
 *   dies before the loop gets it;
 * - `reply`: right after the loop got the reply (its journal entry on its way);
 * - `search`: in the search tool, after the service answered, before the tool returns;
 * - `between`: between the tools — once the search's outcome is in the journal (the store's
 *   `onQuery` hook sees the statement that wrote it return), before the note is dispatched;
 * - `note`: in the note tool, after the service stored the note, before the tool returns.
 *
 * Prints `ready` once it is claiming and `run <runId>` once the submission returns (a worker of a
 * server may claim the run, and die at its first point, before that).
 */
import { writeSync } from "node:fs";
import { Agent, defineTool, type ProviderV1, Session } from "@openrath/core";
// store-postgres does not list the provider as a dev dependency yet; its source is imported by path.
import { openaiProvider } from "@openrath/provider-openai";
import { createDurableRuntime, defineWorkflow } from "@openrath/runtime-durable";
import type { RunStoreV1 } from "@openrath/runtime-durable/store";
import { pgliteStore, postgresStore } from "../postgres-store.js";
import { turnOfMessages } from "./fake-openai-server.js";

const [driver, target, schema, workerId, leaseMs, service, key] = process.argv.slice(2);
const killAt = process.env.OPENRATH_TEST_KILL_AT ?? "";

const say = (line: string) => writeSync(1, `${line}\n`);

/** Dies at `point` of `turn` if that is the kill point (a synchronous write first: nothing is buffered). */
function killIf(turn: number, point: string): void {
  if (killAt !== `${turn}:${point}`) return;
  say(`kill ${killAt}`);
  process.kill(process.pid, "SIGKILL");
}

/** Dies at the point once the current event-loop turn and the next are done (writes sent meanwhile go out). */
function killSoonIf(turn: number, point: string): void {
  if (killAt === `${turn}:${point}`) setImmediate(() => setImmediate(() => killIf(turn, point)));
}

/** Set when the search of the `between` turn returned: the next journal write is its outcome. */
let betweenTurn: number | undefined;
const onQuery = ({ sql }: { sql: string }) => {
  if (betweenTurn !== undefined && /insert into \S*journal/.test(sql)) killIf(betweenTurn, "between");
};

// The model request: the reply is read in full (the server has answered: the call is paid), then
// the process may die before the provider hands it on.
const killingFetch: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  const body = await response.arrayBuffer();
  if (typeof init?.body === "string") killIf(turnOfMessages(JSON.parse(init.body).messages), "model");
  return new Response(body, { status: response.status, headers: response.headers });
};

const openai = openaiProvider({ baseURL: `${service}/v1`, model: "kill-test-model", fetch: killingFetch });
const provider: ProviderV1 = {
  ...openai,
  async complete(request, options) {
    const response = await openai.complete(request, options);
    killSoonIf(turnOfMessages(request.messages), "reply");
    return response;
  },
};

const search = defineTool<{ turn: number }>({
  name: "search",
  description: "Search the sources for a turn",
  parameters: { type: "object", properties: { turn: { type: "number" } }, required: ["turn"] },
  effect: "read_only",
  execute: async ({ turn }) => {
    const found = await (await fetch(`${service}/search?turn=${turn}`)).json();
    killIf(turn, "search");
    if (killAt === `${turn}:between`) betweenTurn = turn;
    return found;
  },
});

const note = defineTool<{ turn: number; text: string }>({
  name: "note",
  description: "Keep a note (idempotent by its key)",
  parameters: {
    type: "object",
    properties: { turn: { type: "number" }, text: { type: "string" } },
    required: ["turn", "text"],
  },
  effect: "idempotent",
  idempotencyKey: (args) => `note-${args.turn}`,
  execute: async ({ turn, text }, ctx) => {
    const stored = await (
      await fetch(`${service}/notes`, {
        method: "POST",
        headers: { "idempotency-key": ctx.idempotencyKey ?? "", "content-type": "application/json" },
        body: JSON.stringify({ text }),
      })
    ).json();
    killIf(turn, "note");
    return stored;
  },
});

const agent = new Agent({
  name: "researcher",
  instructions: "Search, note what you find, then answer.",
  provider,
  tools: [search, note],
  maxTurns: 12,
});
const flow = defineWorkflow("kill-points").step("agent", (session, ctx) => agent.run(session, ctx), {
  entry: true,
});

const store: RunStoreV1 =
  driver === "pglite"
    ? await pgliteStore({ dataDir: target!, schema: schema!, onQuery })
    : await postgresStore({ connectionString: target!, schema: schema!, pool: { max: 4 }, onQuery });
const runtime = createDurableRuntime({ store });
await runtime.register(flow);
const worker = runtime.worker({
  workerId: workerId!,
  leaseMs: Number(leaseMs),
  concurrency: 1,
  log: () => {},
});
await worker.start();
say("ready");
const { id: runId } = await runtime.submit(flow.name, Session.fromUserMessage("research the topic"), {
  idempotencyKey: key!,
});
say(`run ${runId}`);
const status = await runtime.wait(runId).then(
  (ended) => ended.status,
  (error: { code?: string }) => `error:${error.code ?? String(error)}`,
);
await worker.stop({ drain: false });
await store.close();
say(`done ${runId} ${status}`);
process.exit(0);
