import { backoffDelay, checkOptions } from "@openrath/core/backend";
import {
  DurableError,
  inProcessSignals,
  type Signal,
  type SignalsV1,
  type SignalTopic,
  topicOf,
} from "@openrath/runtime-durable/store";
import { Redis, type RedisOptions } from "ioredis";
import { notReadyReason, redisTarget, scrub } from "./internal/redis-url.js";
import { RedisSignalsOptionsSchema } from "./internal/schemas.js";
import { twinMatcher } from "./internal/twin-matcher.js";
import { channelOf, decodeSignal, encodeSignal, topicOfChannel } from "./internal/wire.js";

/** Options of {@link redisSignals}. */
export interface RedisSignalsOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://…` (default `redis://127.0.0.1:6379`). */
  readonly url?: string;
  /** ioredis options merged over the URL (TLS, password, sentinels, `connectTimeout`, …). */
  readonly redis?: RedisOptions;
  /**
   * Channel prefix (default `"openrath"`): channels are `<prefix>:work`, `<prefix>:cancel` and
   * `<prefix>:run:<runId>`. Deployments sharing one Redis use different prefixes.
   */
  readonly prefix?: string;
  /**
   * The PostgreSQL path, normally the store's own signals (`store.signals`: `LISTEN/NOTIFY` on a
   * server, in-process on PGlite). Subscribed beside Redis at all times, so a subscriber keeps
   * hearing the store's commit notifications while Redis is away; while Redis is away durable
   * signals (work, cancel, event) are published through it instead. Without one, signals are lost
   * while Redis is away and workers rely on their safety sweep.
   */
  readonly fallback?: SignalsV1;
  /** A publish with no reply from Redis in this long goes to the fallback instead (default 500 ms). */
  readonly publishTimeoutMs?: number;
  /**
   * How long `subscribe` waits for Redis to confirm the subscription before it relies on the
   * fallback alone for the moment (default 1000 ms). Redis subscribes as soon as it can.
   */
  readonly subscribeTimeoutMs?: number;
  /** Longest wait between reconnect attempts; they back off from 50 ms (default 1000 ms). */
  readonly maxReconnectDelayMs?: number;
  /**
   * While Redis is up, a run event that arrives through the fallback first is held this long for
   * its Redis twin (default 250 ms): Redis keeps one publisher's signals in order (live events
   * before the event that ends the run), so its copy is the one delivered. An event whose twin
   * never comes (its publisher lost Redis) is delivered after this delay: the bound on the
   * fallback's delay. `work` and `cancel` are never held: the first copy wins, the twin is dropped.
   */
  readonly fallbackGraceMs?: number;
}

/** Counters of a {@link RedisSignals} instance, for metrics and tests. */
export interface RedisSignalsStats {
  /** `ready`: both connections are up; `connecting`: at least one is (re)connecting; `closed`. */
  readonly state: "ready" | "connecting" | "closed";
  /** Signals published through Redis. */
  readonly publishedRedis: number;
  /** Durable signals published through the fallback because Redis was away or did not answer. */
  readonly publishedFallback: number;
  /** Signals not published at all: live payloads while Redis was away, or no fallback. */
  readonly dropped: number;
  /** Signals that arrived through Redis / through the fallback (before de-duplication). */
  readonly receivedRedis: number;
  readonly receivedFallback: number;
  /** Copies not delivered because their twin through the other path was (or is) delivered. */
  readonly duplicates: number;
  /** Messages on our channels that were not valid signals (ignored). */
  readonly malformed: number;
  /** Times the subscriber connection came back after losing Redis. */
  readonly reconnects: number;
}

/** Signals over Redis pub/sub, with the store's path as the floor. */
export interface RedisSignals extends SignalsV1 {
  /** The counters so far. */
  stats(): RedisSignalsStats;
  /**
   * Resolves once both Redis connections are ready (for start-up checks and tests).
   *
   * @throws {DurableError} `store_unavailable` naming the URL (without its password) with
   *   `details.reason`: `unreachable` after `timeoutMs` (default 10 000), or at once
   *   `authentication_failed` when Redis refuses the login; the connection's last error is the cause.
   */
  ready(options?: { readonly timeoutMs?: number }): Promise<void>;
}

type Counters = { -readonly [K in keyof RedisSignalsStats]: RedisSignalsStats[K] };

interface TopicEntry {
  count: number;
  readonly ready: Promise<void>;
  readonly fallbackStop: Promise<(() => Promise<void>) | undefined>;
}

/** Resolves when `client` next becomes ready. */
function onceReady(client: Redis): Promise<void> {
  return new Promise((resolve) => client.once("ready", () => resolve()));
}

function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms);
      timer.unref?.();
    }),
  ]);
}

/**
 * Signals on Redis pub/sub through `ioredis`: wake-ups on `<prefix>:work`, cancels on
 * `<prefix>:cancel`, and each run's events (hints and live payloads such as token deltas) on its
 * own channel `<prefix>:run:<runId>`, fanned out to every subscriber in every process. Redis
 * holds no state: a message only says "look at the store". With a `fallback` (the store's own
 * signals) a subscriber hears both paths (event hints are de-duplicated by sequence), and while
 * Redis is away durable signals go through the fallback, live payloads are dropped, and the
 * connections reconnect on their own.
 *
 * Pass it to the runtime, which then publishes every commit's signals through it:
 *
 * @example
 * ```ts
 * const store = await postgresStore({ connectionString: process.env.DATABASE_URL });
 * const signals = redisSignals({ url: process.env.REDIS_URL, fallback: store.signals });
 * const runtime = createDurableRuntime({ store, signals });
 * ```
 * @throws {OpenRathError} `invalid_argument` for a bad or unknown option, such as a bad prefix or
 *   timeout, or a `url` that is not a `redis:`/`rediss:` URL with a port in 1 to 65535 (checked
 *   before anything connects; no message shows a password).
 */
export function redisSignals(options: RedisSignalsOptions = {}): RedisSignals {
  const settings = checkOptions(RedisSignalsOptionsSchema, options, {
    backend: "redisSignals",
    secrets: ["url", "redis"],
  });
  const { prefix, publishTimeoutMs, subscribeTimeoutMs, fallback, fallbackGraceMs: graceMs } = settings;
  const maxDelay = settings.maxReconnectDelayMs;
  // Errors name this target, never its password.
  const target = redisTarget(settings.url, settings.redis);

  const base: RedisOptions = {
    retryStrategy: (times) => backoffDelay(times, { baseMs: 50, maxMs: Math.min(maxDelay, 50 * 2 ** 10) }),
    ...settings.redis,
  };
  const connect = (extra: RedisOptions) =>
    settings.url ? new Redis(settings.url, { ...base, ...extra }) : new Redis({ ...base, ...extra });
  // Publishing never waits for a connection: without one it fails at once and goes elsewhere.
  const pub = connect({
    enableOfflineQueue: false,
    commandTimeout: publishTimeoutMs,
    connectionName: `${prefix}-signals-pub`,
  });
  // The subscriber queues while disconnected and resubscribes its channels when Redis is back.
  const sub = connect({
    enableOfflineQueue: true,
    autoResubscribe: true,
    maxRetriesPerRequest: null,
    connectionName: `${prefix}-signals-sub`,
  });

  const counters: Counters = {
    state: "connecting",
    publishedRedis: 0,
    publishedFallback: 0,
    dropped: 0,
    receivedRedis: 0,
    receivedFallback: 0,
    duplicates: 0,
    malformed: 0,
    reconnects: 0,
  };
  const local = inProcessSignals("redis");
  const topics = new Map<SignalTopic, TopicEntry>();
  const twins = twinMatcher(graceMs, (signal) => deliver(signal));
  let closed = false;
  let lastError: Error | undefined;
  let subWasReady = false;
  let pubWasReady = false;
  pub.on("ready", () => {
    pubWasReady = true;
    lastError = undefined;
  });

  const deliver = (signal: Signal) => {
    if (closed) return;
    local.deliver(signal);
  };

  // ioredis reports connection trouble as "error" events; the reconnect loop handles them, and
  // the last one explains a `ready()` that fails.
  pub.on("error", (error: Error) => {
    lastError = error;
  });
  sub.on("error", (error: Error) => {
    lastError = error;
  });
  sub.on("message", (channel: string, message: string) => {
    const topic = topicOfChannel(prefix, channel);
    const signal = topic === undefined ? undefined : decodeSignal(topic, message);
    if (!signal) {
      counters.malformed++;
      return;
    }
    counters.receivedRedis++;
    const verdict = twins.fromRedis(signal);
    if (verdict !== "deliver") counters.duplicates++;
    if (verdict !== "duplicate") deliver(signal);
  });
  const fromFallback = (signal: Signal) => {
    if (closed) return;
    counters.receivedFallback++;
    // With our Redis away, the fallback is the only path: no waiting.
    const verdict = twins.fromFallback(signal, sub.status === "ready");
    if (verdict === "duplicate") counters.duplicates++;
    else if (verdict === "deliver") deliver(signal);
  };
  const lost = () => {
    if (closed) return;
    // Signals in flight on the lost connection may be gone: release what waits for a Redis twin
    // and tell listeners to look at the store.
    twins.flush();
    local.deliver({ kind: "work" });
    for (const topic of topics.keys()) {
      if (topic.startsWith("run:")) local.deliver({ kind: "event", runId: topic.slice(4), seq: -1 });
    }
  };
  // Once per lost connection, not once per failed reconnect attempt.
  let subUp = false;
  sub.on("close", () => {
    if (!subUp) return;
    subUp = false;
    lost();
  });
  sub.on("ready", () => {
    subUp = true;
    if (!subWasReady) {
      subWasReady = true;
      return;
    }
    counters.reconnects++;
    // Whatever was published while the subscriber was away is in the store: look again.
    local.deliver({ kind: "work" });
    for (const topic of topics.keys()) {
      if (topic.startsWith("run:")) local.deliver({ kind: "event", runId: topic.slice(4), seq: -1 });
    }
  });

  const subscribeRedis = async (channel: string) => {
    const pending = sub.subscribe(channel).then(
      () => {},
      () => {},
    );
    // Wait while Redis is up or still making its first connection; during an outage the
    // subscription is queued for the reconnect and the fallback covers it meanwhile.
    if (sub.status === "ready" || !subWasReady) await within(pending, subscribeTimeoutMs);
  };

  return {
    specVersion: "v1",
    name: "redis",
    capabilities: { crossProcess: true, livePayloads: true },

    async publish(signal) {
      if (closed) return;
      // Right after start-up the first connection is still being made: give it a moment.
      if (!pubWasReady && pub.status !== "ready") await within(onceReady(pub), publishTimeoutMs);
      if (pub.status === "ready") {
        try {
          await pub.publish(channelOf(prefix, topicOf(signal)), encodeSignal(signal));
          counters.publishedRedis++;
          return;
        } catch {
          // Redis went away mid-publish or did not answer in time: take the other path.
        }
      }
      // Live payloads are ephemeral and too frequent for the database: they wait for Redis.
      if (fallback === undefined || (signal.kind === "event" && signal.live !== undefined)) {
        counters.dropped++;
        return;
      }
      await fallback.publish(signal);
      counters.publishedFallback++;
    },

    async subscribe(topic, listener) {
      if (closed) return async () => {};
      if (topic !== "work" && topic !== "cancel" && !(topic.startsWith("run:") && topic.length > 4)) {
        throw new DurableError("invalid_argument", `Unknown signal topic ${JSON.stringify(topic)}.`, {
          details: { topic },
        });
      }
      let entry = topics.get(topic);
      if (!entry) {
        const fallbackStop = fallback ? fallback.subscribe(topic, fromFallback) : Promise.resolve(undefined);
        entry = {
          count: 0,
          fallbackStop,
          ready: Promise.all([subscribeRedis(channelOf(prefix, topic)), fallbackStop]).then(() => {}),
        };
        topics.set(topic, entry);
      }
      entry.count++;
      const own = entry;
      try {
        await own.ready;
      } catch (error) {
        own.count--;
        if (own.count === 0 && topics.get(topic) === own) topics.delete(topic);
        throw error;
      }
      const stopLocal = await local.subscribe(topic, listener);
      let stopped = false;
      return async () => {
        if (stopped) return;
        stopped = true;
        await stopLocal();
        own.count--;
        if (own.count > 0 || topics.get(topic) !== own) return;
        topics.delete(topic);
        if (!closed) sub.unsubscribe(channelOf(prefix, topic)).catch(() => {});
        const stopFallback = await own.fallbackStop.catch(() => undefined);
        await stopFallback?.().catch(() => {});
      };
    },

    async close() {
      if (closed) return;
      closed = true;
      counters.state = "closed";
      await local.close();
      const entries = [...topics.values()];
      topics.clear();
      twins.clear();
      for (const entry of entries) {
        const stop = await entry.fallbackStop.catch(() => undefined);
        await stop?.().catch(() => {});
      }
      pub.disconnect();
      sub.disconnect();
    },

    stats() {
      const state = closed
        ? "closed"
        : pub.status === "ready" && sub.status === "ready"
          ? "ready"
          : "connecting";
      return { ...counters, state };
    },

    async ready({ timeoutMs = 10_000 } = {}) {
      const deadline = Date.now() + timeoutMs;
      while (!(pub.status === "ready" && sub.status === "ready")) {
        if (closed) throw new DurableError("invalid_argument", "These Redis signals are closed.");
        const reason = notReadyReason(lastError);
        // A refused login or a missing database does not go away by waiting.
        if (reason !== "unreachable" || Date.now() > deadline) {
          const why = lastError ? `: ${scrub(lastError.message, target).replace(/\.$/, "")}` : "";
          throw new DurableError(
            "store_unavailable",
            reason === "unreachable"
              ? `Redis at ${target.url} did not become ready within ${timeoutMs} ms (publisher ${pub.status}, subscriber ${sub.status})${why}.`
              : `Redis at ${target.url} refused the login${why}. Check the user and password in the URL or the redis options.`,
            {
              ...(lastError ? { cause: lastError } : {}),
              details: { url: target.url, reason, retryable: reason === "unreachable" },
            },
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
  };
}
