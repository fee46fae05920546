import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import {
  closeAllSandboxes,
  defaultRegistry,
  type ProviderCallOptions,
  type ProviderRequest,
  type ProviderV1,
  Session,
} from "@openrath/core";
import { ROLES, scriptedBrain, TASK } from "@openrath/demo";
import { DurableMamsWorkflow } from "@openrath/demo/durable";
import { createDurableRuntime, DurableError, type RunStoreV1 } from "@openrath/runtime-durable";
import { localSandbox } from "@openrath/sandbox-local";
import { pgliteStore } from "@openrath/store-postgres";
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openrathTelemetry } from "../index.js";

let dir: string;
beforeAll(async () => {
  const registry = defaultRegistry();
  if (!registry.has("sandbox", "local")) registry.registerSandbox(localSandbox());
  dir = await mkdtemp(join(tmpdir(), "openrath-otel-mams-"));
});
afterAll(async () => {
  await closeAllSandboxes();
  await rm(dir, { recursive: true, force: true });
});

/**
 * The store as a worker whose process died sees it: from `kill()` on, every call fails as if the
 * database were unreachable (nothing more is written for that worker, its lease runs out).
 */
function dyingStore(store: RunStoreV1): { store: RunStoreV1; kill(): void } {
  let dead = false;
  const cache = new WeakMap<object, object>();
  const wrap = <T extends object>(target: T): T => {
    const known = cache.get(target);
    if (known) return known as T;
    // A proxy of an empty object reading the real one: the store's objects are frozen, and a proxy
    // of a frozen object must hand out its very values.
    const proxy = new Proxy({} as T, {
      has: (_, key) => Reflect.has(target, key),
      get(_, key) {
        const t = target;
        const value = Reflect.get(t, key, t) as unknown;
        // The in-process signals and the manifest stay: the worker must keep running to be "killed".
        if (typeof key === "symbol" || key === "signals" || key === "capabilities") return value;
        if (typeof value === "function") {
          return (...args: unknown[]) =>
            dead
              ? Promise.reject(new DurableError("store_unavailable", "the worker's database is gone"))
              : (value as (...a: unknown[]) => unknown).apply(t, args);
        }
        return value !== null && typeof value === "object" ? wrap(value) : value;
      },
    });
    cache.set(target, proxy);
    return proxy;
  };
  return { store: wrap(store), kill: () => (dead = true) };
}

/**
 * The demo's scripted brain, except that the wordsmith's second model call kills the worker's
 * store and never answers (until the step is aborted): the worker dies mid agent loop, after its
 * first reply and tool call are journaled.
 */
function killingBrain(kill: () => void): { provider: ProviderV1; killed: Promise<void> } {
  const brain = scriptedBrain();
  let calls = 0;
  let killed!: () => void;
  const done = new Promise<void>((r) => (killed = r));
  const provider: ProviderV1 = {
    specVersion: "v1",
    name: brain.name,
    model: brain.model,
    async complete(request: ProviderRequest, options?: ProviderCallOptions) {
      const system = request.messages[0];
      if (system?.role === "system" && String(system.content).startsWith(ROLES.wordsmith) && ++calls === 2) {
        kill();
        killed();
        await new Promise((_, reject) =>
          options?.signal?.addEventListener("abort", () => reject(options.signal?.reason), { once: true }),
        );
      }
      return brain.complete(request, options);
    },
  };
  return { provider, killed: done };
}

const MODEL = scriptedBrain().model;
const attr = (span: ReadableSpan, name: string) => span.attributes[name];
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe("the span tree of the durable MAMS run", () => {
  it("is one trace across a worker killed mid-step and the worker that resumes it, journal hits marked", async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    const tracer = provider.getTracer("test");
    const db = await PGlite.create();
    const base = await pgliteStore({ db, schema: "otel_mams" });
    const dying = dyingStore(base);
    const quiet = () => {};

    // Worker A: its own runtime over the store it will lose.
    const runtimeA = createDurableRuntime({ store: dying.store, ...openrathTelemetry({ tracer }).runtime });
    const { provider: brainA, killed } = killingBrain(dying.kill);
    const workspace = join(dir, "killed");
    await runtimeA.register(new DurableMamsWorkflow(brainA, { workspace }));
    // Worker B: another runtime (another process, as far as the run can tell), same database.
    const runtimeB = createDurableRuntime({ store: base, ...openrathTelemetry({ tracer }).runtime });
    await runtimeB.register(new DurableMamsWorkflow(scriptedBrain(), { workspace }));

    // The caller's span, as a `traceparent` header would carry it.
    const caller = { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7" };
    const run = await runtimeA.submit("durable-mams", Session.fromUserMessage(TASK, { author: "user" }), {
      traceContext: { traceparent: `00-${caller.traceId}-${caller.spanId}-01`, tracestate: "vendor=1" },
    });
    expect(run.traceContext?.traceparent).toMatch(new RegExp(`^00-${caller.traceId}-[0-9a-f]{16}-01$`));
    expect(run.traceContext?.tracestate).toBe("vendor=1");

    const workerA = runtimeA.worker({ workerId: "worker-a", leaseMs: 600, log: quiet });
    await workerA.start();
    await killed;
    // What worker A journaled before it died carries the trace and span of each live call.
    const journaled = await db.query<{ position: string; trace_id: string | null; span_id: string | null }>(
      "select position, trace_id, span_id from otel_mams.journal where run_id = $1 order by position",
      [run.id],
    );
    expect(journaled.rows.length).toBeGreaterThanOrEqual(2);
    for (const row of journaled.rows) {
      expect(row.trace_id).toBe(caller.traceId);
      expect(row.span_id).toMatch(/^[0-9a-f]{16}$/);
    }

    const workerB = runtimeB.worker({ workerId: "worker-b", leaseMs: 600, log: quiet });
    await workerB.start();
    const ended = await runtimeB.wait(run.id);
    expect(ended.status).toBe("succeeded");
    const session = await runtimeB.result(run.id);
    expect(session.text()).toContain("The sentence has 9 words.");
    await workerB.stop({ drain: false });
    await workerA.stop({ drain: false });
    await provider.forceFlush();

    const spans = exporter.getFinishedSpans();
    const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
    // One trace: the caller's.
    expect(new Set(spans.map((s) => s.spanContext().traceId))).toEqual(new Set([caller.traceId]));

    const submit = spans.find((s) => s.name === "submit durable-mams")!;
    expect(parentOf(submit)).toBe(caller.spanId);
    expect(run.traceContext?.traceparent).toContain(submit.spanContext().spanId);
    const runSpan = spans.find((s) => s.name === "run durable-mams")!;
    expect(parentOf(runSpan)).toBe(submit.spanContext().spanId);
    expect(attr(runSpan, "openrath.run.status")).toBe("succeeded");
    // The run's span starts at the submission, whichever worker ended it.
    expect(runSpan.startTime[0] * 1000 + runSpan.startTime[1] / 1e6).toBeCloseTo(run.createdAt, -1);

    const steps = spans.filter((s) => s.name.startsWith("step "));
    for (const step of steps) expect(parentOf(step)).toBe(submit.spanContext().spanId);
    const stepsBy = (worker: string) =>
      steps
        .filter((s) => attr(s, "openrath.worker.id") === worker)
        .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1])
        .map((s) => attr(s, "openrath.step.id"));
    expect(stepsBy("worker-a")).toEqual(["plan", "wordsmith"]);
    expect(stepsBy("worker-b")).toEqual([
      "wordsmith",
      "analyst",
      "statistician",
      "compress",
      "decide",
      "route",
      "writer",
    ]);
    const killedStep = steps.find(
      (s) => attr(s, "openrath.worker.id") === "worker-a" && attr(s, "openrath.step.id") === "wordsmith",
    )!;
    expect(killedStep.status.code).toBe(2);
    for (const span of spans.filter((s) => s !== submit))
      expect(attr(span, "openrath.run.id"), span.name).toBe(run.id);
    for (const span of spans.filter((s) => s !== submit)) {
      expect(attr(span, "openrath.session.id"), span.name).toEqual(expect.any(String));
      expect(attr(span, "openrath.lineage.node.id"), span.name).toEqual(expect.any(String));
    }

    /** The spans under `root`, as names nested by parent, children in start order. */
    const under = (root: ReadableSpan): ReadableSpan[] =>
      spans
        .filter((s) => parentOf(s) === root.spanContext().spanId)
        .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);

    // The resumed wordsmith: its first reply and tool call come from the journal, the rest live.
    const resumed = steps.find(
      (s) => attr(s, "openrath.worker.id") === "worker-b" && attr(s, "openrath.step.id") === "wordsmith",
    )!;
    const [fork, agent, merge] = under(resumed);
    expect(fork?.name).toBe("session.fork");
    expect(agent?.name).toBe("invoke_agent wordsmith");
    expect(merge?.name).toBe("session.merge");
    const loop = under(agent!);
    expect(loop.map((s) => [s.name, attr(s, "openrath.replayed") ?? "live"])).toEqual([
      [`chat ${MODEL}`, "journal"],
      ["execute_tool write_workspace_file", "journal"],
      [`chat ${MODEL}`, "live"],
      ["execute_tool run_shell_command", "live"],
      [`chat ${MODEL}`, "live"],
    ]);
    const [replayedChat, , liveChat] = loop;
    expect(attr(replayedChat!, "gen_ai.usage.input_tokens")).toBeUndefined();
    expect(liveChat!.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "scripted",
      "gen_ai.request.model": MODEL,
      "gen_ai.response.model": MODEL,
      "gen_ai.response.finish_reasons": ["tool_calls"],
      "gen_ai.usage.input_tokens": expect.any(Number),
      "gen_ai.usage.output_tokens": expect.any(Number),
      "openrath.worker.id": "worker-b",
    });
    expect(liveChat!.attributes["gen_ai.input.messages"]).toBeUndefined();
    expect(loop[1]!.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "write_workspace_file",
      "openrath.tool.effect": expect.any(String),
    });
    const exec = under(loop[3]!);
    expect(exec.map((s) => [s.name, attr(s, "process.exit.code")])).toEqual([["sandbox.exec", 0]]);

    // The killed attempt made its first calls live, and its unanswered call ended with the step.
    const killedLoop = under(under(killedStep).find((s) => s.name === "invoke_agent wordsmith")!);
    expect(killedLoop.map((s) => attr(s, "openrath.replayed") ?? "live")).toEqual(["live", "live", "live"]);
    expect(killedLoop.at(-1)!.status.code).toBe(2);
    // Every journal entry worker A left names one of its live calls' spans.
    for (const row of journaled.rows) expect(byId.get(row.span_id!)?.name).toMatch(/^(chat|execute_tool) /);

    // The selector's choice and the compressor's call.
    const decide = steps.find((s) => attr(s, "openrath.step.id") === "decide")!;
    const [select] = under(decide);
    expect(select!.attributes).toMatchObject({
      "openrath.selector.candidates": ["writer", "reviewer"],
      "openrath.selector.chosen": "writer",
      "openrath.selector.index": 0,
    });
    const compress = steps.find((s) => attr(s, "openrath.step.id") === "compress")!;
    expect(under(compress).map((s) => [s.name, attr(s, "openrath.caller.kind")])).toEqual([
      [`chat ${MODEL}`, "Compressor"],
    ]);

    // The lineage points back at the trace: each agent loop's node names its span.
    const loops = collectLoops(session);
    expect(loops.length).toBeGreaterThan(0);
    for (const node of loops) {
      expect(node.trace?.traceId).toBe(caller.traceId);
      expect(byId.get(node.trace!.spanId)?.name).toBe(`invoke_agent ${node.operator}`);
    }
    // Worker A's runtime cannot reach its store any more; B's closes the shared one.
    await runtimeA.close().catch(() => {});
    await runtimeB.close();
    await db.close();
    await provider.shutdown();
  }, 120_000);
});

/** The `loop` nodes of a session's lineage. */
function collectLoops(session: Session) {
  const out: Session["lineage"][] = [];
  const seen = new Set<string>();
  const stack = [session.lineage];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (seen.has(node.id)) continue;
    seen.add(node.id);
    if (node.op === "loop") out.push(node);
    stack.push(...node.parents);
  }
  return out;
}
