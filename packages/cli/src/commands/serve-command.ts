import { join } from "node:path";
import { Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import { OpenRathError } from "@openrath/core";
import type { DurableRuntime } from "@openrath/runtime-durable";
import type { AuthOptions, PrometheusRegistry } from "@openrath/server";
import type { Logger } from "pino";
import { type Config, readConfig, stateDir } from "../config.js";
import { UsageError } from "../internal/args.js";
import type { Command, CommandContext } from "../internal/command.js";
import { openBackends } from "./backends.js";
import { workerHealth } from "./worker-health.js";

type Options = Readonly<Record<string, string | true | undefined>>;

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

/**
 * Registers the workflows `serve` and `worker` run: those a module exports (`--workflows <file>`:
 * every export that is a `DurableWorkflow` or a `defineWorkflow()` definition), else the demo's two:
 * the MAMS team and a review that waits for an approval.
 */
async function registerWorkflows(
  ctx: CommandContext,
  config: Config,
  runtime: DurableRuntime,
  options: Options,
): Promise<string[]> {
  if (typeof options.workflows === "string") {
    const file = ctx.resolve(options.workflows);
    const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    const { DurableWorkflow, WorkflowBuilder } = await import("@openrath/runtime-durable");
    const names: string[] = [];
    for (const value of Object.values(module)) {
      if (value instanceof DurableWorkflow || value instanceof WorkflowBuilder) {
        const plan = await runtime.register(value);
        names.push(plan.name);
      }
    }
    if (names.length === 0)
      throw new OpenRathError(
        "invalid_argument",
        `${file} exports no durable workflow (DurableWorkflow or defineWorkflow)`,
      );
    return names;
  }
  const { DurableMamsWorkflow, reviewWorkflow } = await import("@openrath/demo/durable");
  const { scriptedBrain } = await import("@openrath/demo");
  const { defaultRegistry } = await import("@openrath/core");
  const { localSandbox } = await import("@openrath/sandbox-local");
  const registry = defaultRegistry();
  if (!registry.has("sandbox", "local")) registry.registerSandbox(localSandbox());
  const state = stateDir(ctx, config, options);
  // The same workflow, workspace and pause as `demo --durable`, so this server's worker can run its runs.
  const mams = await runtime.register(
    new DurableMamsWorkflow(scriptedBrain(), { workspace: join(state, "demo-workspace") }, 300),
  );
  const review = await runtime.register(reviewWorkflow);
  return [mams.name, review.name];
}

function positiveInt(value: string | true | undefined, name: string, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new UsageError(`--${name} must be 1–${max}`);
  return n;
}

/**
 * Traces through the OpenTelemetry API (`@openrath/otel`): the runs' submit, step and run spans,
 * recorded by whatever SDK the process registered (for example with `node --import` of a setup
 * file); with none, the API's no-op.
 */
async function tracingOptions() {
  const { openrathTracing } = await import("@openrath/otel");
  const tracing = openrathTracing();
  return { middleware: [tracing.middleware], traceSubmit: tracing.traceSubmit };
}

/** The worker of `serve` and `worker`, as the configuration sets it, logging to `logger`. */
async function workerOptions(
  config: Config,
  concurrency: number,
  logger: Logger,
  metrics?: PrometheusRegistry["openrath"],
) {
  const { workerLogOf } = await import("@openrath/server");
  return {
    concurrency,
    leaseMs: config.OPENRATH_WORKER_LEASE_MS,
    jobs: { webhooks: { allowInternalTargets: config.OPENRATH_WEBHOOKS_ALLOW_INTERNAL } },
    log: workerLogOf(logger),
    ...(metrics ? { middleware: metrics.middleware, observer: metrics.worker } : {}),
  };
}

/**
 * The process's logger: pino at OPENRATH_LOG_LEVEL on standard error, one JSON object per line, or
 * pino-pretty's coloured lines (OPENRATH_LOG_FORMAT `pretty`, or `auto` on a terminal).
 */
async function processLogger(ctx: CommandContext, config: Config, name: string): Promise<Logger> {
  const { serverLogger } = await import("@openrath/server");
  const pretty =
    config.OPENRATH_LOG_FORMAT === "pretty" ||
    (config.OPENRATH_LOG_FORMAT === "auto" && ctx.stderr.isTTY === true);
  const stderr = new Writable({
    write(chunk, _encoding, done) {
      ctx.stderr.write(String(chunk));
      done();
    },
  });
  if (pretty) {
    const { default: prettyStream } = await import("pino-pretty");
    return serverLogger({
      level: config.OPENRATH_LOG_LEVEL,
      base: { name },
      destination: prettyStream({ colorize: ctx.stderr.isTTY === true, destination: stderr, sync: true }),
    });
  }
  return serverLogger({ level: config.OPENRATH_LOG_LEVEL, base: { name }, destination: stderr });
}

/** The server's auth options for a mode, with the JWT settings from the configuration. */
function authOptions(mode: string, config: Config): AuthOptions {
  if (mode === "local" || mode === "tokens") return { mode };
  const { OPENRATH_JWKS_URL: jwksUrl, OPENRATH_JWT_ISSUER: issuer, OPENRATH_JWT_AUDIENCE: audience } = config;
  if (!jwksUrl || !issuer || !audience)
    throw new UsageError("--auth jwt needs OPENRATH_JWKS_URL, OPENRATH_JWT_ISSUER and OPENRATH_JWT_AUDIENCE");
  return { mode: "jwt", jwksUrl, issuer, audience };
}

/** Resolves when the process gets SIGINT or SIGTERM. */
function stopSignal(): { readonly stopped: Promise<string>; dispose(): void } {
  let dispose = () => {};
  const stopped = new Promise<string>((resolve) => {
    const on = (signal: NodeJS.Signals) => resolve(signal);
    // `on`, not `once`, until disposed: a `once` listener is gone by the time the next listener
    // runs, and signal-exit's (the local sandbox's exit cleanup) takes being alone for "nobody
    // handles this signal" and re-raises it, so the process would die by the signal, not exit 0.
    process.on("SIGINT", on);
    process.on("SIGTERM", on);
    dispose = () => {
      process.off("SIGINT", on);
      process.off("SIGTERM", on);
    };
  });
  return { stopped, dispose };
}

const STATE_OPTION = {
  name: "state",
  value: "<dir>",
  description:
    "The embedded store's directory (default ./.openrath); DATABASE_URL selects PostgreSQL instead.",
} as const;
const WORKFLOWS_OPTION = {
  name: "workflows",
  value: "<file>",
  description:
    "A module whose exported durable workflows to run (default: the demo's durable-mams and review).",
} as const;
const CONCURRENCY_OPTION = {
  name: "concurrency",
  value: "<n>",
  description: "Runs a worker executes at once (1–256, default $OPENRATH_WORKER_CONCURRENCY or 8).",
} as const;

export const serveCommand: Command = {
  name: "serve",
  summary: "Run the Agent Server with a worker, on the embedded store or DATABASE_URL.",
  description:
    "Serves the HTTP API (runs, events over SSE, interrupts, effects; reference at /docs) and runs a worker in the same process. On the embedded store and a loopback host it needs no token (local mode); with --auth tokens it accepts tokens made by `openrath tokens create`. SIGINT or SIGTERM stops it: requests in flight finish, the worker hands its steps over, and it exits 0.",
  args: [],
  options: [
    { name: "port", value: "<n>", description: "The port (default $PORT or 8787; 0 picks a free one)." },
    { name: "host", value: "<addr>", description: "The address to listen on (default 127.0.0.1)." },
    {
      name: "auth",
      value: "<mode>",
      choices: ["local", "tokens"],
      description:
        "local: no credentials, loopback only (default on the embedded store); tokens: bearer tokens (default with DATABASE_URL).",
    },
    STATE_OPTION,
    WORKFLOWS_OPTION,
    CONCURRENCY_OPTION,
    { name: "no-worker", description: "Serve the API only; workers run elsewhere (`openrath worker`)." },
  ],
  examples: [
    "openrath serve",
    "openrath serve --port 9000 --workflows ./workflows.js",
    "DATABASE_URL=postgres://… openrath serve --auth tokens",
  ],
  async run(ctx, { options }) {
    const config = readConfig(ctx.env);
    const host = typeof options.host === "string" ? options.host : config.OPENRATH_HOST;
    const port = typeof options.port === "string" ? Number(options.port) : config.PORT;
    if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new UsageError("--port must be 0–65535");
    const concurrency = positiveInt(
      options.concurrency,
      "concurrency",
      config.OPENRATH_WORKER_CONCURRENCY,
      256,
    );
    const auth =
      options.auth ??
      config.OPENRATH_AUTH ??
      (config.DATABASE_URL || !LOOPBACK.has(host) ? "tokens" : "local");
    if (auth === "local" && !LOOPBACK.has(host))
      throw new UsageError("--auth local serves a loopback host only; use --auth tokens");
    const { createServer, prometheusRegistry } = await import("@openrath/server");
    const { createDurableRuntime } = await import("@openrath/runtime-durable");
    const signal = stopSignal();
    const backends = await openBackends(ctx, config, options, "serve");
    const runtime = createDurableRuntime({
      store: backends.store,
      ...(backends.signals ? { signals: backends.signals } : {}),
      ...(await tracingOptions()),
    });
    const logger = await processLogger(ctx, config, "openrath-serve");
    // One registry: the server's /metrics shows the store's counts and this process's worker.
    const registry = prometheusRegistry();
    try {
      const names = await registerWorkflows(ctx, config, runtime, options);
      const worker = options["no-worker"]
        ? undefined
        : runtime.worker(await workerOptions(config, concurrency, logger, registry.openrath));
      await worker?.start();
      const app = await createServer({
        runtime,
        host,
        logger,
        metrics: { registry },
        ...(backends.artifacts ? { artifacts: backends.artifacts } : {}),
        ...(backends.memory ? { memory: backends.memory } : {}),
        auth: authOptions(String(auth), config),
        rateLimit: { max: config.OPENRATH_RATE_LIMIT },
        ...(config.OPENRATH_CORS_ORIGINS ? { corsOrigins: config.OPENRATH_CORS_ORIGINS } : {}),
      });
      await app.listen({ port, host });
      const address = app.server.address();
      const bound = typeof address === "object" && address ? address.port : port;
      const url = `http://${host.includes(":") ? `[${host}]` : host}:${bound}`;
      ctx.stderr.write(
        [
          `OpenRath server on ${url} (API reference ${url}/docs)`,
          ...backends.lines.map((line) => `  ${line}`),
          `  workflows  ${names.join(", ")}`,
          `  worker     ${worker ? `in this process, ${concurrency} at once` : "none (--no-worker)"}`,
          `  auth       ${auth === "local" ? "local: no token needed on this loopback host" : auth === "jwt" ? `JWTs from ${config.OPENRATH_JWT_ISSUER}` : "bearer tokens (openrath tokens create)"}`,
          "Stop with Ctrl-C.",
          "",
        ].join("\n"),
      );
      const received = await signal.stopped;
      ctx.stderr.write(
        `${received}: stopping — requests in flight finish, the worker hands its steps over…\n`,
      );
      await app.close();
      return 0;
    } finally {
      signal.dispose();
      await runtime.close();
      await backends.close();
      await registry.shutdown();
      logger.flush();
    }
  },
};

export const workerCommand: Command = {
  name: "worker",
  summary: "Run a worker for the store's queued runs, without the HTTP API.",
  description:
    "Claims and executes runs of the workflows it registers (a module's, or the demo's). SIGINT or SIGTERM stops it: the steps in flight finish or are handed over, then it exits 0.",
  args: [],
  options: [STATE_OPTION, WORKFLOWS_OPTION, CONCURRENCY_OPTION],
  examples: ["DATABASE_URL=postgres://… openrath worker --workflows ./workflows.js --concurrency 16"],
  async run(ctx, { options }) {
    const config = readConfig(ctx.env);
    const concurrency = positiveInt(
      options.concurrency,
      "concurrency",
      config.OPENRATH_WORKER_CONCURRENCY,
      256,
    );
    const { createDurableRuntime } = await import("@openrath/runtime-durable");
    const signal = stopSignal();
    const backends = await openBackends(ctx, config, options, "worker");
    const logger = await processLogger(ctx, config, "openrath-worker");
    // This process's worker metrics (claims, steps, leases, journal hits, tokens), scraped at the
    // health endpoint's /metrics; the store's counts are the API process's to report.
    const { prometheusRegistry } = await import("@openrath/server");
    const registry = prometheusRegistry();
    const runtime = createDurableRuntime({
      store: await workerHealth(ctx, config, backends.store, () => registry.scrape()),
      ...(backends.signals ? { signals: backends.signals } : {}),
      ...(await tracingOptions()),
    });
    try {
      const names = await registerWorkflows(ctx, config, runtime, options);
      const worker = runtime.worker(await workerOptions(config, concurrency, logger, registry.openrath));
      await worker.start();
      ctx.stderr.write(
        [
          `OpenRath worker: ${names.join(", ")}, ${concurrency} at once. Stop with Ctrl-C.`,
          ...backends.lines.map((line) => `  ${line}`),
          "",
        ].join("\n"),
      );
      const received = await signal.stopped;
      ctx.stderr.write(`${received}: stopping — the steps in flight finish or are handed over…\n`);
      return 0;
    } finally {
      signal.dispose();
      await runtime.close();
      await registry.shutdown();
      logger.flush();
    }
  },
};
