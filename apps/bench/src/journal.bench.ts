// The step journal's cost: a ten-turn agent (nine turns with one tool call, then the answer) run
// inside a durable step — every model and tool call journaled, fenced, before the agent sees its
// answer — against the same agent run plainly in memory, in the same process, on embedded PGlite
// and on a local PostgreSQL. The agent's time is measured inside the step (the step's own
// checkpoint and claim are not the journal's cost). Each journaled run is paired with a plain run
// made right before it; the tool is `read_only` (journaled only: repeating it is safe) or
// `idempotent` with a key (ledgered: its dispatch, carrying the model call's entry, then its outcome
// with its own entry — two statements per turn).
//
//   OPENRATH_BENCH_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/postgres pnpm --filter @openrath/bench run bench:journal
//
// Target: at most 1 ms per journaled call on local PostgreSQL. Database latency moves with the
// machine's load, so each case also reports a bare round trip to the same database (`select now()`,
// measured between the runs) and the overhead in round trips per call. One JSON line per case.
import {
  Agent,
  defineTool,
  type EffectClass,
  ScriptedProvider,
  type ScriptedTurn,
  Session,
} from "@openrath/core";
import { createDurableRuntime, defineWorkflow } from "@openrath/runtime-durable";
import pg from "pg";
import { benchPostgresUrl, freshStore } from "./internal/durable-fixtures.js";
import { emit, median, progressFor, quantile, round } from "./internal/report.js";

const progress = progressFor("journal");
const quick = process.env.OPENRATH_BENCH_QUICK === "1";
const TURNS = 10;
const RUNS = quick ? 10 : 40;
const WARMUP = 5;
const TARGET_MS_PER_CALL = 1;
/** Journaled calls per run: ten model calls and nine tool calls. */
const CALLS = TURNS + (TURNS - 1);

function agent(effect: EffectClass): Agent {
  const lookup = defineTool<{ k: number }>({
    name: "lookup",
    description: "Look a value up",
    parameters: { type: "object", properties: { k: { type: "number" } }, required: ["k"] },
    effect,
    ...(effect === "idempotent" ? { idempotencyKey: (args: { k: number }) => `k-${args.k}` } : {}),
    execute: ({ k }) => ({ k, value: (k * 7919) % 1000 }),
  });
  return new Agent({
    name: "bench",
    tools: [lookup],
    maxTurns: TURNS + 2,
    provider: new ScriptedProvider((request): ScriptedTurn => {
      const turn = request.messages.filter((m) => m.role === "tool").length + 1;
      return turn >= TURNS
        ? { text: "done", usage: { promptTokens: 10, completionTokens: 2, totalTokens: 12 } }
        : {
            toolCalls: [{ name: "lookup", arguments: { k: turn }, id: `c${turn}` }],
            usage: { promptTokens: 10, completionTokens: 2, totalTokens: 12 },
          };
    }),
  });
}

async function measure(driver: "pglite" | "postgres", effect: EffectClass) {
  progress(`${driver}, tool effect ${effect}: ${RUNS} runs`);
  const { store, schema } = await freshStore(driver);
  const runtime = createDurableRuntime({ store });
  const journaledAgent = agent(effect);
  const plainAgent = agent(effect);
  const inStep: number[] = [];
  const flow = defineWorkflow(`journal-bench-${effect}`).step(
    "agent",
    async (session, ctx) => {
      const t = performance.now();
      const out = await journaledAgent.run(session, ctx);
      inStep.push(performance.now() - t);
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
  const perCall = median(overheads) / CALLS;
  emit({
    bench: "journal",
    case: `agent_loop_${effect}_tool`,
    driver,
    turns: TURNS,
    journaled_calls: CALLS,
    runs: RUNS,
    plain_ms_per_run: round(median(anchor)),
    journaled_ms_per_run: round(median(journaled)),
    journaled_p90_ms_per_run: round(quantile(journaled, 0.9)),
    overhead_ms_per_turn: round(median(overheads) / TURNS),
    overhead_ms_per_call: round(perCall),
    ratio_to_plain: round(median(journaled) / median(anchor), 2),
    round_trip_ms: round(median(roundTrips)),
    overhead_round_trips_per_call: round(perCall / median(roundTrips), 2),
    ...(driver === "postgres"
      ? { target_ms_per_call: TARGET_MS_PER_CALL, meets_target: perCall <= TARGET_MS_PER_CALL }
      : {}),
  });
}

// OPENRATH_BENCH_JOURNAL_DRIVERS=postgres (comma-separated) limits the drivers while iterating.
const drivers = (process.env.OPENRATH_BENCH_JOURNAL_DRIVERS ?? "pglite,postgres").split(",");
for (const driver of (["pglite", "postgres"] as const).filter((d) => drivers.includes(d))) {
  for (const effect of ["read_only", "idempotent"] as const) await measure(driver, effect);
}
