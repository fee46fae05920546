import { type CallHooks, costOf, type ModelCall, type PriceTable, priceFor } from "@openrath/core";
import type { RunStoreV1, StepContext, StepMiddleware, WorkerObserver } from "@openrath/runtime-durable";
import { type Attributes, type Meter, metrics } from "@opentelemetry/api";
import { ATTR, METRIC } from "./names.js";
import { observeStoreCounts } from "./store-gauges.js";

export { ATTR as METRIC_ATTRIBUTES, METRIC as METRIC_NAMES } from "./names.js";

/** Options of {@link openrathMetrics}. */
export interface OpenRathMetricsOptions {
  /** The meter every instrument is made on (default `metrics.getMeter("@openrath/otel")`). */
  readonly meter?: Meter;
  /**
   * Model prices in US dollars per million tokens (core's `PriceTable`), for `openrath.cost`.
   * Without one, or for a model it lacks, no cost is recorded (tokens still are).
   */
  readonly prices?: PriceTable;
}

/** What {@link openrathMetrics} gives: the hooks to install and the store's observable gauges. */
export interface OpenRathMetrics {
  /**
   * Step middleware (install on the runtime's worker, after the journal, which
   * `runtime.worker({ middleware })` does): step durations, journal hits, and the tokens and cost
   * of the step's live model calls by tenant, workflow and model.
   */
  readonly middleware: readonly StepMiddleware[];
  /**
   * Call hooks for a run outside a durable step (`agent.run(session, { calls })`): tokens and cost
   * by model. Inside a step the middleware records them; do not add both.
   */
  readonly calls: CallHooks;
  /**
   * The worker's observer (`runtime.worker({ observer })`): claim round trips, runs claimed,
   * leases lost and expired, runs taken back at start.
   */
  readonly worker: WorkerObserver;
  /**
   * Reports the store's counts (runs by status and workflow, queue depth and the oldest due run's
   * age, effects under review, open interrupts) as observable gauges, read with one
   * `store.stats.read()` per collection. Nothing on a store without `capabilities.stats`. Observe
   * a store once per meter (the server does; workers need not). Returns the function that stops.
   */
  observeStore(store: RunStoreV1): () => void;
}

const SECONDS = { unit: "s" } as const;
// Step and claim latencies span milliseconds (a claim, a cached step) to minutes (an agent loop).
const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/**
 * Metrics of OpenRath through the OTel metrics API: no-ops with no SDK registered. Names and
 * attributes are in {@link METRIC_NAMES} and {@link METRIC_ATTRIBUTES}; no attribute is a run id.
 *
 * @example
 * ```ts
 * const m = openrathMetrics({ meter: provider.getMeter("openrath") });
 * const worker = runtime.worker({ middleware: m.middleware, observer: m.worker });
 * m.observeStore(runtime.store);
 * ```
 */
export function openrathMetrics(options: OpenRathMetricsOptions = {}): OpenRathMetrics {
  const meter = options.meter ?? metrics.getMeter("@openrath/otel");
  const prices = options.prices;
  const claimDuration = meter.createHistogram(METRIC.claimDuration, {
    ...SECONDS,
    description: "Round trip of a worker's claim to the store.",
    advice: { explicitBucketBoundaries: LATENCY_BUCKETS },
  });
  const runsClaimed = meter.createCounter(METRIC.runsClaimed, {
    description: "Runs claimed.",
    unit: "{run}",
  });
  const leasesLost = meter.createCounter(METRIC.leasesLost, {
    description: "Leases a worker learnt it lost.",
    unit: "{lease}",
  });
  const leasesExpired = meter.createCounter(METRIC.leasesExpired, {
    description: "Runs whose lease expired, requeued by a sweep.",
    unit: "{run}",
  });
  const runsReclaimed = meter.createCounter(METRIC.runsReclaimed, {
    description: "Runs a restarted worker identity took back.",
    unit: "{run}",
  });
  // The counters without attributes exist from the start (at 0), so a scrape shows them before the first event.
  leasesExpired.add(0);
  runsReclaimed.add(0);
  const stepDuration = meter.createHistogram(METRIC.stepDuration, {
    ...SECONDS,
    description: "Duration of each step attempt.",
    advice: { explicitBucketBoundaries: LATENCY_BUCKETS },
  });
  const journalHits = meter.createCounter(METRIC.journalHits, {
    description: "Model and tool calls answered from the journal (no provider request, no tool run).",
    unit: "{call}",
  });
  const tokens = meter.createCounter(METRIC.tokens, {
    description: "Tokens of live model calls.",
    unit: "{token}",
  });
  const cost = meter.createCounter(METRIC.cost, { description: "Cost of live model calls.", unit: "USD" });

  /** Records a live model call's usage under `base` (tenant and workflow when known). */
  const spent = (
    call: ModelCall,
    model: string,
    usage: { promptTokens: number; completionTokens: number } | undefined,
    base: Attributes,
  ) => {
    if (usage === undefined) return;
    const attributes = { ...base, [ATTR.model]: model || call.request.model || "unknown" };
    tokens.add(usage.promptTokens, { ...attributes, [ATTR.tokenType]: "input" });
    tokens.add(usage.completionTokens, { ...attributes, [ATTR.tokenType]: "output" });
    const price = prices ? priceFor(prices, attributes[ATTR.model] as string) : undefined;
    if (price) cost.add(costOf(usage as Parameters<typeof costOf>[0], price), attributes);
  };

  /** The step's call hooks with live calls and journal hits counted around them. */
  const counted = (ctx: StepContext): CallHooks | undefined => {
    const inner = ctx.calls;
    const workflow = ctx.workflow ?? "unknown";
    const base: Attributes = { [ATTR.tenant]: ctx.tenantId, [ATTR.workflow]: workflow };
    const hit = (kind: "model" | "tool") =>
      journalHits.add(1, { [ATTR.workflow]: workflow, [ATTR.kind]: kind });
    return {
      ...inner,
      model: async (call, next) => {
        if (inner?.model === undefined) {
          const response = await next();
          spent(call, response.model, response.usage, base);
          return response;
        }
        let live = false;
        const response = await inner.model(call, () => {
          live = true;
          return next();
        });
        if (live) spent(call, response.model, response.usage, base);
        else hit("model");
        return response;
      },
      ...(inner?.tool
        ? {
            tool: async (dispatch, next) => {
              let live = false;
              const outcome = await inner.tool!(dispatch, (override) => {
                live = true;
                return next(override);
              });
              if (!live) hit("tool");
              return outcome;
            },
          }
        : {}),
    };
  };

  const middleware: StepMiddleware = {
    name: "openrath-metrics",
    async around(ctx, next) {
      const started = performance.now();
      const attributes: Attributes = { [ATTR.workflow]: ctx.workflow ?? "unknown", [ATTR.step]: ctx.stepId };
      let outcome = "error";
      try {
        const result = await next({ ...ctx, calls: counted(ctx) });
        outcome = "ok";
        return result;
      } finally {
        stepDuration.record((performance.now() - started) / 1000, { ...attributes, [ATTR.outcome]: outcome });
      }
    },
  };

  const worker: WorkerObserver = (event) => {
    switch (event.type) {
      case "claim":
        claimDuration.record(event.durationMs / 1000, {
          [ATTR.outcome]: event.failed ? "failed" : event.claimed > 0 ? "claimed" : "empty",
        });
        if (event.claimed > 0) runsClaimed.add(event.claimed, { [ATTR.via]: "claim" });
        break;
      case "adopted":
        runsClaimed.add(1, { [ATTR.via]: "submit" });
        break;
      case "lease_lost":
        leasesLost.add(1, { [ATTR.workflow]: event.workflow });
        break;
      case "leases_expired":
        if (event.requeued > 0) leasesExpired.add(event.requeued);
        break;
      case "reclaimed":
        runsReclaimed.add(event.runs);
        break;
    }
  };

  return {
    middleware: [middleware],
    calls: {
      model: async (call, next) => {
        const response = await next();
        spent(call, response.model, response.usage, {});
        return response;
      },
    },
    worker,
    observeStore: (store) => observeStoreCounts(meter, store),
  };
}
