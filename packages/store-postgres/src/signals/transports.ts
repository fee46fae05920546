import type { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import type { NotifyChannels, NotifyTransport } from "./notify-signals.js";

/**
 * LISTEN on a dedicated `pg` connection, reconnecting with backoff (100 ms doubling to 2 s) when
 * the server goes away; NOTIFY through the store's pool.
 */
export function pgTransport(
  config: pg.ClientConfig,
  channels: NotifyChannels,
  notify: (channel: string, payload: string) => Promise<void>,
): NotifyTransport {
  let client: pg.Client | undefined;
  /** The listening client once it listens: it also sends the batched notifications. */
  let ready: pg.Client | undefined;
  let stopped = false;
  const pending: (readonly [string, string])[] = [];
  let sending = false;
  // One batch in flight at a time, on the listening connection (idle between notifications), so
  // notifications leave in order, never wait for a pool connection, and under load go many per statement.
  const flush = () => {
    if (sending || pending.length === 0 || stopped) return;
    const batch = pending.splice(0);
    sending = true;
    // Raw: sent on the listening `pg` client, outside Kysely.
    const sent = ready
      ? ready.query(
          "select pg_notify(n.channel, n.payload) from unnest($1::text[], $2::text[]) as n(channel, payload)",
          [batch.map(([channel]) => channel), batch.map(([, payload]) => payload)],
        )
      : Promise.all(batch.map(([channel, payload]) => notify(channel, payload)));
    sent
      .catch(() => {})
      .finally(() => {
        sending = false;
        flush();
      });
  };
  let timer: NodeJS.Timeout | undefined;
  let delay = 100;
  const listen = async (
    onNotify: (channel: string, payload: string) => void,
    onReconnect: () => void,
    first: boolean,
  ) => {
    const next = new pg.Client(config);
    next.on("notification", (message) => onNotify(message.channel, message.payload ?? ""));
    const retry = () => {
      if (stopped || client !== next) return;
      client = undefined;
      ready = undefined;
      next.removeAllListeners("error");
      next.on("error", () => {});
      next.end().catch(() => {});
      timer = setTimeout(() => {
        listen(onNotify, onReconnect, false).catch(() => {});
      }, delay);
      delay = Math.min(delay * 2, 2000);
    };
    next.on("error", retry);
    next.on("end", retry);
    client = next;
    try {
      await next.connect();
      for (const channel of [channels.work, channels.cancel, channels.events]) {
        // Raw: `LISTEN` on the listening `pg` client, outside Kysely.
        await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      }
      delay = 100;
      ready = next;
      if (!first) onReconnect();
    } catch (error) {
      if (first) {
        client = undefined;
        next.removeAllListeners("end");
        next.removeAllListeners("error");
        next.on("error", () => {});
        await next.end().catch(() => {});
        throw error;
      }
      retry();
    }
  };
  return {
    start: (onNotify, onReconnect) => listen(onNotify, onReconnect, true),
    notify,
    notifyBatch(notifications) {
      pending.push(...notifications);
      flush();
    },
    async stop() {
      stopped = true;
      ready = undefined;
      if (timer) clearTimeout(timer);
      const c = client;
      client = undefined;
      if (c) {
        c.removeAllListeners("end");
        c.removeAllListeners("error");
        c.on("error", () => {});
        await c.end().catch(() => {});
      }
    },
  };
}

/**
 * The listeners of each PGlite database in this process: every store over the database (a second
 * store over the same instance, another schema) hears the signals the others publish after their
 * commits, as LISTEN would have delivered them.
 */
const hubs = new WeakMap<PGlite, Set<(channel: string, payload: string) => void>>();

/**
 * LISTEN inside an embedded PGlite database: notifications stay in this process. Signals published
 * after a commit (`notifyBatch`) go straight to the listeners of the same database, without a
 * statement: a statement that notifies costs PGlite its slower path (ADR 0018, decision 6), and nothing outside
 * this process can listen to an embedded database.
 */
export function pgliteTransport(
  db: PGlite,
  channels: NotifyChannels,
  notify: (channel: string, payload: string) => Promise<void>,
): NotifyTransport {
  const stops: (() => Promise<void>)[] = [];
  const listeners = hubs.get(db) ?? new Set();
  hubs.set(db, listeners);
  let listener: ((channel: string, payload: string) => void) | undefined;
  return {
    async start(onNotify) {
      const ours = new Set([channels.work, channels.cancel, channels.events]);
      listener = (channel, payload) => {
        if (ours.has(channel)) onNotify(channel, payload);
      };
      listeners.add(listener);
      for (const channel of ours) {
        stops.push(await db.listen(channel, (payload) => onNotify(channel, payload)));
      }
    },
    notify,
    notifyBatch(notifications) {
      // After the caller's commit, on a later turn, as a notification would arrive.
      queueMicrotask(() => {
        for (const [channel, payload] of notifications)
          for (const deliver of listeners) {
            try {
              deliver(channel, payload);
            } catch {
              // One listener failing does not keep the signal from the others.
            }
          }
      });
    },
    async stop() {
      if (listener) listeners.delete(listener);
      listener = undefined;
      if (db.closed) return;
      for (const stop of stops.splice(0)) await stop().catch(() => {});
    },
  };
}
