// One variant of the otel overhead bench in a process of its own, forked by otel.bench.ts with an
// IPC channel: `otel-variant.ts <baseline|no_sdk|sdk>`. The parent sends `{ workload, runs }`; the
// child runs that many runs one after another and answers with the batch's wall and CPU time.
//
// - `baseline` never loads @openrath/otel: the agent and the durable runtime get no telemetry.
// - `no_sdk` wires `openrathTelemetry()` as the package's README does (the run options on the
//   agent, `telemetry.runtime` on the runtime, `telemetry.worker` on the worker, the store gauges)
//   with no OpenTelemetry SDK registered, so every tracer and meter is the API's no-op.
// - `sdk` wires the same, after registering a global context manager (AsyncLocalStorage, as a
//   Node SDK setup does), a `TracerProvider` with a `BatchSpanProcessor` whose exporter drops the
//   spans (it only counts them), and a `MeterProvider` whose periodic reader exports to an
//   exporter that drops the metrics.
//
// A process per variant, because registering a provider is process-wide: the `no_sdk` variant
// would otherwise not be one, and a baseline in the same process would share the branch listener
// `openrathTracing()` installs in core.
import { AsyncLocalStorage } from "node:async_hooks";
import {
  Agent,
  defineTool,
  type ProviderRequest,
  type RunOptions,
  ScriptedProvider,
  Session,
} from "@openrath/core";
import { createDurableRuntime, type DurableRuntime, defineWorkflow } from "@openrath/runtime-durable";
import type { Context, ContextManager } from "@opentelemetry/api";
import { z } from "zod";
import {
  ANSWER,
  type Counts,
  countWords,
  QUESTION,
  SAMPLE,
  TOOL_RESULT,
  TOOL_TURNS,
  TURNS,
  USAGE,
  wantsTool,
} from "../agent-loop/workload.js";
import { chain, freshStore } from "./durable-fixtures.js";

export type Variant = "baseline" | "no_sdk" | "sdk";
export type Workload = "agent_loop" | "durable_chain" | "durable_agent";
/** Steps of the `durable_chain` workflow. */
const CHAIN_STEPS = 10;

/** Parent to child: run a batch, or report the totals and exit. */
export type Request = { readonly workload: Workload; readonly runs: number } | { readonly done: true };
/** Child to parent. */
export type Reply =
  | { readonly ready: true; readonly recording: boolean; readonly chainSteps: number }
  | {
      readonly workload: Workload;
      readonly wallUs: number;
      readonly cpuUs: number;
      readonly runsUs: number[];
    }
  | { readonly spans: number; readonly metricExports: number; readonly runs: Record<Workload, number> }
  | { readonly error: string };

const variant = process.argv[2] as Variant;
if (!["baseline", "no_sdk", "sdk"].includes(variant)) throw new Error(`unknown variant ${variant}`);
const send = (reply: Reply) => process.send!(reply);

/** A minimal AsyncLocalStorage context manager, the kind a Node SDK setup registers. */
class AlsContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  constructor(private readonly root: Context) {}
  active(): Context {
    return this.storage.getStore() ?? this.root;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.storage.run(ctx, () => fn.apply(thisArg, args));
  }
  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== "function") return target;
    const fn = target as (...args: unknown[]) => unknown;
    return ((...args: unknown[]) => this.with(ctx, fn, undefined, ...args)) as T;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.storage.disable();
    return this;
  }
}

let spans = 0;
let metricExports = 0;
let flush = async () => {};
if (variant === "sdk") {
  const { context, metrics, ROOT_CONTEXT, trace } = await import("@opentelemetry/api");
  const { BatchSpanProcessor, TracerProvider } = await import("@opentelemetry/sdk-trace");
  const { MeterProvider, PeriodicExportingMetricReader } = await import("@opentelemetry/sdk-metrics");
  // ExportResultCode.SUCCESS of @opentelemetry/core is 0.
  const ok = { code: 0 } as const;
  context.setGlobalContextManager(new AlsContextManager(ROOT_CONTEXT));
  const tracerProvider = new TracerProvider({
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: {
          export: (batch, done) => {
            spans += batch.length;
            done(ok);
          },
          shutdown: async () => {},
        },
      }),
    ],
  });
  trace.setGlobalTracerProvider(tracerProvider);
  metrics.setGlobalMeterProvider(
    new MeterProvider({
      readers: [
        new PeriodicExportingMetricReader({
          exportIntervalMillis: 5_000,
          exporter: {
            export: (_metrics, done) => {
              metricExports++;
              done(ok);
            },
            forceFlush: async () => {},
            shutdown: async () => {},
          },
        }),
      ],
    }),
  );
  flush = () => tracerProvider.forceFlush();
}

const telemetry = variant === "baseline" ? undefined : (await import("@openrath/otel")).openrathTelemetry();
const recording =
  variant !== "baseline" &&
  (await import("@opentelemetry/api")).trace.getTracer("probe").startSpan("probe").isRecording();

/** The agent of the agent-loop bench (src/agent-loop/openrath-side.ts), counting its calls. */
function benchAgent(counts: Counts): Agent {
  const wordCount = defineTool({
    name: "word_count",
    description: "Count the words in a text",
    parameters: z.object({ text: z.string() }),
    execute: ({ text }) => {
      counts.tool++;
      return { words: countWords(text) };
    },
  });
  const provider = new ScriptedProvider((request: ProviderRequest) => {
    counts.model++;
    // The provider keeps every request; thousands of runs would otherwise measure that list grow.
    provider.requests.length = 0;
    let done = 0;
    for (const m of request.messages) if (m.role === "tool") done++;
    return wantsTool(done)
      ? { toolCalls: [{ name: "word_count", arguments: { text: SAMPLE } }], usage: USAGE }
      : { text: ANSWER, usage: USAGE };
  });
  return new Agent({ name: "bench", provider, tools: [wordCount] });
}

/** Throws unless `session` is the agent workload's finished transcript. */
function check(session: Session): void {
  let assistant = 0;
  let results = 0;
  for (const c of session.chunks) {
    if (c.kind === "assistant") assistant++;
    else if (c.kind === "tool_result" && !c.isError && c.content === TOOL_RESULT) results++;
  }
  if (assistant !== TURNS || results !== TOOL_TURNS || session.text() !== ANSWER)
    throw new Error(`${variant}: the agent did different work (${assistant} turns, ${results} tool results)`);
}

const loopCounts: Counts = { model: 0, tool: 0 };
const loopAgent = benchAgent(loopCounts);
const durableCounts: Counts = { model: 0, tool: 0 };
const durableAgent = benchAgent(durableCounts);
const runOptions: RunOptions | undefined = telemetry?.runOptions;

const { store } = await freshStore("pglite");
const runtime: DurableRuntime = createDurableRuntime({ store, ...(telemetry?.runtime ?? {}) });
await runtime.register(chain("chain", CHAIN_STEPS));
await runtime.register(
  defineWorkflow("agent").step("agent", (s, ctx) => durableAgent.run(s, ctx), { entry: true }),
);
const worker = runtime.worker({ concurrency: 1, leaseMs: 30_000, ...(telemetry?.worker ?? {}) });
await worker.start();
telemetry?.metrics.observeStore(store);

const runs: Record<Workload, number> = { agent_loop: 0, durable_chain: 0, durable_agent: 0 };
const once: Record<Workload, () => Promise<void>> = {
  agent_loop: async () => check(await loopAgent.run(Session.fromUserMessage(QUESTION), runOptions)),
  durable_chain: async () => {
    const out = await runtime.result((await runtime.submit("chain", Session.fromUserMessage("bench"))).id);
    if (out.chunks.length !== CHAIN_STEPS + 1)
      throw new Error(`${variant}: the chain ran ${out.chunks.length - 1} steps`);
  },
  durable_agent: async () =>
    check(await runtime.result((await runtime.submit("agent", Session.fromUserMessage(QUESTION))).id)),
};

process.on("message", async (request: Request) => {
  try {
    if ("done" in request) {
      // Every model and tool call was made, once per turn of every run (checked before the totals).
      for (const [counts, done] of [
        [loopCounts, runs.agent_loop],
        [durableCounts, runs.durable_agent],
      ] as const) {
        if (counts.model !== done * TURNS || counts.tool !== done * TOOL_TURNS)
          throw new Error(`${variant}: ${JSON.stringify(counts)} calls for ${done} runs`);
      }
      await worker.stop();
      await store.close();
      await flush();
      send({ spans, metricExports, runs });
      process.disconnect();
      return;
    }
    const runsUs: number[] = [];
    const cpu = process.cpuUsage();
    const start = process.hrtime.bigint();
    for (let i = 0; i < request.runs; i++) {
      const t = process.hrtime.bigint();
      await once[request.workload]();
      runsUs.push(Number(process.hrtime.bigint() - t) / 1000);
    }
    const wallUs = Number(process.hrtime.bigint() - start) / 1000;
    const used = process.cpuUsage(cpu);
    runs[request.workload] += request.runs;
    send({ workload: request.workload, wallUs, cpuUs: used.user + used.system, runsUs });
  } catch (error) {
    send({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
});
// The parent gone (finished, or failed and exited), the worker's timers must not keep this alive.
process.on("disconnect", () => process.exit(0));
send({ ready: true, recording, chainSteps: CHAIN_STEPS });
