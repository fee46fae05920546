import { type OpenRathMetrics, type OpenRathMetricsOptions, openrathMetrics } from "@openrath/otel";
import type { RunStoreV1 } from "@openrath/runtime-durable";
import type { Meter } from "@opentelemetry/api";
import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { ErrorEnvelope } from "../errors.js";

/**
 * A metrics registry served as Prometheus text: an OTel `MeterProvider` whose reader is the
 * Prometheus exporter with its own HTTP server off, so the API serves `/metrics` itself. Give its
 * `meter` to `openrathMetrics` in the same process (a worker beside the server) so one scrape shows
 * both.
 */
export interface PrometheusRegistry {
  readonly meterProvider: MeterProvider;
  /** The meter OpenRath's instruments go on. */
  readonly meter: Meter;
  /**
   * OpenRath's instruments on {@link meter}: give a worker in this process its `middleware` and
   * `worker` observer; the server observes the store through it.
   */
  readonly openrath: OpenRathMetrics;
  /** Collects every instrument once (observable gauges read then) and serializes the result. */
  scrape(): Promise<string>;
  /** Shuts the provider down; later scrapes are empty. */
  shutdown(): Promise<void>;
}

/** Makes a {@link PrometheusRegistry} (`options`: the price table for `openrath.cost`). */
export function prometheusRegistry(options: Pick<OpenRathMetricsOptions, "prices"> = {}): PrometheusRegistry {
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const meterProvider = new MeterProvider({ readers: [exporter] });
  const serializer = new PrometheusSerializer();
  const meter = meterProvider.getMeter("@openrath/server");
  return {
    meterProvider,
    meter,
    openrath: openrathMetrics({ ...options, meter }),
    async scrape() {
      const { resourceMetrics } = await exporter.collect();
      return serializer.serialize(resourceMetrics);
    },
    shutdown: () => meterProvider.shutdown(),
  };
}

/** Options of the server's `/metrics` (`ServerOptions.metrics`). */
export interface ServerMetricsOptions {
  /** The registry to serve (default: one the server makes and shuts down on close). */
  readonly registry?: PrometheusRegistry;
  /**
   * Whether the server reports the store's counts (runs by status, queue, effects under review,
   * open interrupts) on the registry (default true). One process per registry should.
   */
  readonly observeStore?: boolean;
  /**
   * Who may scrape: `"grant"` (default) needs credentials with the `metrics.read` grant, as any
   * route; `"open"` serves anyone who reaches the port (a scrape from a private network). See ADR 0033.
   */
  readonly access?: "grant" | "open";
}

/** The Prometheus text format's content type. */
const PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

/** `GET /metrics`: the registry in the Prometheus text format. */
export const metricsRoutes =
  (store: RunStoreV1, options: ServerMetricsOptions): FastifyPluginAsyncZod =>
  async (app) => {
    const registry = options.registry ?? prometheusRegistry();
    const unobserve = options.observeStore === false ? () => {} : registry.openrath.observeStore(store);
    app.addHook("onClose", async () => {
      unobserve();
      if (options.registry === undefined) await registry.shutdown();
    });
    app.get(
      "/metrics",
      {
        ...(options.access === "open" ? {} : { config: { action: "metrics.read" as const } }),
        schema: {
          tags: ["health"],
          summary: "Metrics in the Prometheus text format",
          description:
            "Runs by status and workflow, the due queue and the age of its oldest run, effects under review, open interrupts (store-wide, every tenant); with a worker in the process, its claims, leases, steps, journal hits and tokens.",
          response: {
            200: {
              description: "The Prometheus text format, version 0.0.4.",
              content: { "text/plain": { schema: z.string() } },
            },
            401: ErrorEnvelope,
            403: ErrorEnvelope,
          },
        },
      },
      async (_request, reply) => {
        reply.type(PROMETHEUS_TEXT);
        return registry.scrape();
      },
    );
  };
