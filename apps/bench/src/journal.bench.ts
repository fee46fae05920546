// The step journal's cost: a ten-turn agent (nine turns with one tool call, then the answer) run
// inside a durable step — every model and tool call journaled, fenced — against the same agent run
// plainly in memory, in the same process, on embedded PGlite and on a local PostgreSQL. The
// agent's time is measured inside the step (the step's own checkpoint and claim are not the
// journal's cost). Each journaled run is paired with a plain run made right before it. The tool is
// `read_only` (journaled only: repeating it is safe) or `idempotent` with a key (ledgered: its
// dispatch, carrying the model call's entry unless that entry's own write has returned, then its
// outcome with its own entry). A model call's entry is written as soon as the reply arrives (ADR
// 0016), so the turn's tools run while it is written; a tool that answers within the same
// event-loop turn takes the entry along in its own statement. The `openai_http` cases make the
// model calls through @openrath/provider-openai against an OpenAI-compatible server in a child
// process on 127.0.0.1 (scripted, as the other cases' ScriptedProvider is), with the read-only
// tool answering at once, or (`io_tool`) fetching its value from a search endpoint of the same
// server that answers after 2 ms, so the model entry's own write overlaps the tool's wait.
//
//   OPENRATH_BENCH_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/postgres pnpm --filter @openrath/bench run bench:journal
//
// Target: at most 1 ms of journal per model turn (all the turn's journal writes together) on local
// PostgreSQL. Database latency moves with the machine's load, so each case also reports a bare
// round trip to the same database (`select now()`, measured between the runs), the overhead in
// round trips per call, and the load average while it ran. One JSON line per case.

import { loadavg } from "node:os";
import {
  Agent,
  defineTool,
  type EffectClass,
  ScriptedProvider,
  type ScriptedTurn,
  Session,
} from "@openrath/core";
// The bench's package does not list the provider as a dependency yet; its source is imported by path.
import { openaiProvider } from "@openrath/provider-openai";
import { createDurableRuntime, defineWorkflow } from "@openrath/runtime-durable";
import pg from "pg";
import { benchPostgresUrl, freshStore } from "./internal/durable-fixtures.js";
import { type OpenAIBenchServer, spawnOpenAIBenchServer } from "./internal/openai-bench-server.js";
import { emit, median, progressFor, quantile, round } from "./internal/report.js";

const progress = progressFor("journal");
const quick = process.env.OPENRATH_BENCH_QUICK === "1";
const TURNS = 10;
const RUNS = quick ? 10 : 40;
const WARMUP = 5;
const TARGET_MS_PER_TURN = 1;
/** Journaled calls per run: ten model calls and nine tool calls. */
const CALLS = TURNS + (TURNS - 1);

/** How long the search service of the `io_tool` case takes (ms): a fast retrieval. */
const SEARCH_MS = 2;
const USAGE = { promptTokens: 10, completionTokens: 2, totalTokens: 12 };

/** The scripted provider's script (the bench's OpenAI server has the same): turn n < 10 asks for `lookup({ k: n })`, turn 10 answers. */
function turnOf(toolResults: number): { k: number } | undefined {
  const turn = toolResults + 1;
  return turn >= TURNS ? undefined : { k: turn };
}

/** How a case's agent reaches its model: the scripted provider, or the OpenAI provider over HTTP. */
type Model = "scripted" | "openai_http";

/** How the tool gets its value: at once, or from the server's search endpoint (I/O). */
type ToolKind = "instant" | "io";

function agent(
  effect: EffectClass,
  model: Model,
  server: OpenAIBenchServer | undefined,
  kind: ToolKind = "instant",
): Agent {
  const lookup = defineTool<{ k: number }>({
    name: "lookup",
    description: "Look a value up",
    parameters: { type: "object", properties: { k: { type: "number" } }, required: ["k"] },
    effect,
    ...(effect === "idempotent" ? { idempotencyKey: (args: { k: number }) => `k-${args.k}` } : {}),
    execute:
      kind === "io"
        ? async ({ k }) => (await fetch(`${server!.url}/search?k=${k}&ms=${SEARCH_MS}`)).json()
        : ({ k }) => ({ k, value: (k * 7919) % 1000 }),
  });
  const scripted = new ScriptedProvider((request): ScriptedTurn => {
    // The provider keeps every request; a bench of hundreds of loops would measure that list grow.
    scripted.requests.length = 0;
    const next = turnOf(request.messages.filter((m) => m.role === "tool").length);
    return next
      ? { toolCalls: [{ name: "lookup", arguments: next, id: `c${next.k}` }], usage: USAGE }
      : { text: "done", usage: USAGE };
  });
  return new Agent({
    name: "bench",
    tools: [lookup],
    maxTurns: TURNS + 2,
    provider:
      model === "openai_http" ? openaiProvider({ baseURL: server!.baseURL, model: "bench-model" }) : scripted,
  });
}

async function measure(
  driver: "pglite" | "postgres",
  effect: EffectClass,
  model: Model,
  kind: ToolKind = "instant",
) {
  progress(`${driver}, ${model} model, ${kind} tool, effect ${effect}: ${RUNS} runs`);
  const server = model === "openai_http" ? await spawnOpenAIBenchServer(TURNS) : undefined;
  // Statements the store sent while the journaled agent ran (the step's own claim and commit are outside it).
  let sent = 0;
  const { store, schema } = await freshStore(driver, { onQuery: () => sent++ });
  const runtime = createDurableRuntime({ store });
  const journaledAgent = agent(effect, model, server, kind);
  const plainAgent = agent(effect, model, server, kind);
  const load = loadavg()[0]!;
  const inStep: number[] = [];
  const statements: number[] = [];
  const flow = defineWorkflow(`journal-bench-${model}-${kind}-${effect}`).step(
    "agent",
    async (session, ctx) => {
      const t = performance.now();
      const before = sent;
      const out = await journaledAgent.run(session, ctx);
      inStep.push(performance.now() - t);
      statements.push(sent - before);
      return out;
    },
    { entry: true },
  );
  await runtime.register(flow);
  const worker = runtime.worker({ concurrency: 1, leaseMs: 30_000 });
  await worker.start();
  const plain: number[] = [];
  const roundTrips: number[] = [];
  try {
    for (let i = 0; i < WARMUP + RUNS; i++) {
      const t = performance.now();
      await plainAgent.run(Session.fromUserMessage("bench"));
      plain.push(performance.now() - t);
      const run = await runtime.submit(flow.name, Session.fromUserMessage("bench"));
      await runtime.result(run.id);
      // The second anchor: one bare round trip to the same database, right after the run.
      for (let k = 0; k < 5; k++) {
        const r = performance.now();
        await store.now();
        roundTrips.push(performance.now() - r);
      }
    }
  } finally {
    await worker.stop();
    await store.close();
    await server?.close();
    if (driver === "postgres") {
      const admin = new pg.Client({ connectionString: benchPostgresUrl() });
      await admin.connect();
      await admin.query(`drop schema if exists ${schema} cascade`);
      await admin.end();
    }
  }
  const journaled = inStep.slice(WARMUP);
  const anchor = plain.slice(WARMUP);
  const overheads = journaled.map((j, i) => j - anchor[i]!);
  const perTurn = median(overheads) / TURNS;
  const perCall = median(overheads) / CALLS;
  emit({
    bench: "journal",
    case: `agent_loop_${model === "scripted" ? "" : `${model}_`}${effect}_${kind === "io" ? "io_" : ""}tool`,
    driver,
    turns: TURNS,
    journaled_calls: CALLS,
    runs: RUNS,
    plain_ms_per_run: round(median(anchor)),
    journaled_ms_per_run: round(median(journaled)),
    journaled_p90_ms_per_run: round(quantile(journaled, 0.9)),
    overhead_ms_per_turn: round(perTurn),
    overhead_ms_per_call: round(perCall),
    ratio_to_plain: round(median(journaled) / median(anchor), 2),
    round_trip_ms: round(median(roundTrips)),
    overhead_round_trips_per_call: round(perCall / median(roundTrips), 2),
    statements_per_turn: round(median(statements.slice(WARMUP)) / TURNS, 2),
    load_average: round((load + loadavg()[0]!) / 2, 1),
    ...(driver === "postgres"
      ? { target_ms_per_turn: TARGET_MS_PER_TURN, meets_target: perTurn <= TARGET_MS_PER_TURN }
      : {}),
  });
}

// OPENRATH_BENCH_JOURNAL_DRIVERS=postgres and OPENRATH_BENCH_JOURNAL_CASES=openai_http
// (comma-separated) limit the drivers and the models while iterating.
const drivers = (process.env.OPENRATH_BENCH_JOURNAL_DRIVERS ?? "pglite,postgres").split(",");
const models = (process.env.OPENRATH_BENCH_JOURNAL_CASES ?? "scripted,openai_http").split(",");
for (const driver of (["pglite", "postgres"] as const).filter((d) => drivers.includes(d))) {
  if (models.includes("scripted"))
    for (const effect of ["read_only", "idempotent"] as const) await measure(driver, effect, "scripted");
  if (models.includes("openai_http")) {
    await measure(driver, "read_only", "openai_http");
    await measure(driver, "read_only", "openai_http", "io");
  }
}
