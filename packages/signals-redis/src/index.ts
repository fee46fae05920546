/**
 * `@openrath/signals-redis`: the durable runtime's signals on Redis pub/sub through `ioredis` —
 * wake-ups, cancels and live per-run events (token deltas) fanned out to every subscriber, with
 * the store's PostgreSQL `LISTEN/NOTIFY` path as the floor while Redis is away.
 */

export {
  type RedisSignals,
  type RedisSignalsOptions,
  type RedisSignalsStats,
  redisSignals,
} from "./redis-signals.js";
