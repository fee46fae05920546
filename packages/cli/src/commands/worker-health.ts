import { createServer, type Server } from "node:http";
import type { RunStoreV1 } from "@openrath/runtime-durable";
import type { Config } from "../config.js";
import type { CommandContext } from "../internal/command.js";

/** Options of {@link watchWorkerHealth}. */
export interface WorkerHealthOptions {
  /** The port of the health endpoint (0 picks a free one). */
  readonly port: number;
  /** The address it listens on. */
  readonly host: string;
  /**
   * How long without a heartbeat tick the worker counts as stalled, and how long a store call
   * may stay unanswered before the store counts as unreachable. Default: the worker's lease
   * (three missed heartbeats, the point where its leases lapse), at least 10 s.
   */
  readonly staleMs?: number;
  /** Where the line naming the endpoint goes once it listens. */
  readonly write?: (line: string) => void;
  /**
   * The worker's metrics in the Prometheus text format, served at `GET /metrics` on the same
   * port (no credentials: the port is for probes and scrapes, not the API; see ADR 0036).
   */
  readonly metrics?: () => Promise<string>;
}

/** The Prometheus text format's content type. */
const PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

/** The store calls the worker's claim loop and heartbeat make: their outcome is the store's health. */
const WATCHED = new Set<PropertyKey>(["claim", "reclaim", "heartbeat", "sweep"]);
/** Calls that show the worker's heartbeat timer fired (`reclaim` once at start, `sweep` every beat). */
const BEATS = new Set<PropertyKey>(["reclaim", "sweep"]);
const MIN_STALE_MS = 10_000;

interface StoreState {
  /** `performance.now()` of the last heartbeat tick (or of the watch starting, before the first). */
  lastBeat: number;
  /** Whether the worker has started (its `reclaim` answered). */
  started: boolean;
  /** The outcome of the last store call that ended, with the error code of a failure. */
  last: { readonly ok: true } | { readonly ok: false; readonly code: string } | undefined;
  /** Start times of the watched calls in flight. */
  readonly pending: Set<{ readonly since: number }>;
  /** The worker's lease, learnt from its first claim request. */
  leaseMs: number | undefined;
  closed: boolean;
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" ? code : "error";
}

/**
 * Serves a worker's health on its own port, from what the worker does with its store — no probe
 * query of its own, so an idle worker costs the database nothing more:
 *
 * - `GET /health/live`: 200 while the worker's heartbeat ticks (its timer calls the store's
 *   `sweep` every third of the lease); 503 once it has not ticked for `staleMs` — the worker
 *   stopped, or the event loop is starved so badly that its leases lapse. Restarting helps then.
 * - `GET /health/ready`: 200 when it is live, has started, and the store answered the worker's
 *   last claim, heartbeat or sweep; 503 while the store is unreachable (the last call failed, or
 *   one is unanswered for `staleMs`). A restart does not fix a database outage, so liveness does
 *   not follow the store (see ADR 0034).
 *
 * Returns the store to give the runtime in place of `store`; closing it closes the endpoint.
 */
export async function watchWorkerHealth(
  store: RunStoreV1,
  options: WorkerHealthOptions,
): Promise<RunStoreV1> {
  const state: StoreState = {
    lastBeat: performance.now(),
    started: false,
    last: undefined,
    pending: new Set(),
    leaseMs: undefined,
    closed: false,
  };
  const staleMs = () => options.staleMs ?? Math.max(state.leaseMs ?? 30_000, MIN_STALE_MS);
  const server = createServer((request, response) => {
    const now = performance.now();
    const live = !state.closed && now - state.lastBeat <= staleMs();
    const hung = [...state.pending].some((call) => now - call.since > staleMs());
    const storeOk = state.last?.ok !== false && !hung;
    const path = (request.url ?? "/").split("?")[0];
    if (path === "/metrics" && options.metrics && (request.method === "GET" || request.method === "HEAD")) {
      options.metrics().then(
        (text) => {
          response.writeHead(200, { "content-type": PROMETHEUS_TEXT, "cache-control": "no-store" });
          response.end(request.method === "HEAD" ? undefined : text);
        },
        (error: unknown) => {
          response.writeHead(500, { "content-type": "application/json", "cache-control": "no-store" });
          response.end(JSON.stringify({ status: "metrics_failed", code: codeOf(error) }));
        },
      );
      return;
    }
    let status: number;
    let body: Record<string, unknown>;
    if (request.method !== "GET" && request.method !== "HEAD") {
      status = 405;
      body = { status: "method_not_allowed" };
    } else if (path === "/health/live") {
      status = live ? 200 : 503;
      body = live
        ? { status: "ok" }
        : { status: "stalled", sinceLastHeartbeatMs: Math.round(now - state.lastBeat) };
    } else if (path === "/health/ready") {
      const ready = live && state.started && storeOk;
      status = ready ? 200 : 503;
      body = {
        status: ready ? "ready" : "not_ready",
        checks: {
          heartbeat: live ? "ok" : "failed",
          started: state.started ? "ok" : "failed",
          store: storeOk ? "ok" : "failed",
        },
        ...(state.last?.ok === false
          ? { storeError: state.last.code }
          : hung
            ? { storeError: "timeout" }
            : {}),
      };
    } else {
      status = 404;
      body = { status: "not_found" };
    }
    response.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
    response.end(request.method === "HEAD" ? undefined : JSON.stringify(body));
  });
  await listen(server, options.port, options.host);
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  options.write?.(
    `health     http://${host}:${port}/health/live and /health/ready${options.metrics ? ", /metrics" : ""}\n`,
  );

  const observe = (key: PropertyKey, args: unknown[], result: Promise<unknown>): Promise<unknown> => {
    const call = { since: performance.now() };
    if (BEATS.has(key)) state.lastBeat = call.since;
    const lease = (args[0] as { leaseMs?: unknown } | undefined)?.leaseMs;
    if ((key === "claim" || key === "reclaim") && typeof lease === "number") state.leaseMs = lease;
    state.pending.add(call);
    return result.then(
      (value) => {
        state.pending.delete(call);
        state.last = { ok: true };
        if (key === "reclaim") state.started = true;
        return value;
      },
      (error: unknown) => {
        state.pending.delete(call);
        state.last = { ok: false, code: codeOf(error) };
        throw error;
      },
    );
  };
  const close = async () => {
    try {
      await store.close();
    } finally {
      if (!state.closed) {
        state.closed = true;
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
      }
    }
  };
  // Bound once per member, so a member read twice is the same function.
  const members = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== "function") return value;
      let member = members.get(key);
      if (member === undefined) {
        const fn = value as (...args: unknown[]) => unknown;
        member =
          key === "close"
            ? close
            : WATCHED.has(key)
              ? (...args: unknown[]) => observe(key, args, Promise.resolve(fn.apply(target, args)))
              : fn.bind(target);
        members.set(key, member);
      }
      return member;
    },
  });
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

/**
 * The store `openrath worker` gives its runtime: watched by a health endpoint on
 * `OPENRATH_WORKER_HEALTH_PORT` (on `OPENRATH_HOST`) when that is set, with the worker's metrics
 * at `/metrics` when `metrics` is given; else `store` itself.
 */
export function workerHealth(
  ctx: CommandContext,
  config: Config,
  store: RunStoreV1,
  metrics?: () => Promise<string>,
): Promise<RunStoreV1> {
  const port = config.OPENRATH_WORKER_HEALTH_PORT;
  if (port === undefined) return Promise.resolve(store);
  return watchWorkerHealth(store, {
    port,
    host: config.OPENRATH_HOST,
    write: (line) => ctx.stderr.write(`  ${line}`),
    ...(metrics ? { metrics } : {}),
  });
}
