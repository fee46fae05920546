import {
  HeardRuns,
  inProcessSignals,
  type RunStatus,
  type Signal,
  type SignalsV1,
} from "@openrath/runtime-durable/store";

/** The three channels a store notifies on. */
export interface NotifyChannels {
  readonly work: string;
  readonly cancel: string;
  readonly events: string;
}

/** Turns a NOTIFY on one of `channels` into a signal (`undefined` for a malformed payload). */
export function signalOf(channels: NotifyChannels, channel: string, payload: string): Signal | undefined {
  if (channel === channels.work) return payload ? { kind: "work", planHash: payload } : { kind: "work" };
  if (channel === channels.cancel) return { kind: "cancel", runId: payload };
  if (channel === channels.events) {
    // `<runId>:<seq>` or `<runId>:<seq>:<status>`.
    const [runId, seqText, status] = payload.split(":");
    const seq = Number(seqText);
    if (!runId || !Number.isFinite(seq)) return undefined;
    return status
      ? { kind: "event", runId, seq, status: status as RunStatus }
      : { kind: "event", runId, seq };
  }
  return undefined;
}

/** How a NOTIFY-based signals backend reaches the database. */
export interface NotifyTransport {
  /** Starts listening on the channels; calls `onNotify` per notification and `onReconnect` after a gap. */
  start(onNotify: (channel: string, payload: string) => void, onReconnect: () => void): Promise<void>;
  /** Sends `pg_notify(channel, payload)`. */
  notify(channel: string, payload: string): Promise<void>;
  /**
   * Sends several notifications in one statement outside any write's transaction (after their
   * commits). Fire-and-forget: a lost notification is a delayed wake-up, never lost state.
   */
  notifyBatch?(notifications: readonly (readonly [channel: string, payload: string])[]): void;
  stop(): Promise<void>;
}

/**
 * Signals over PostgreSQL `LISTEN/NOTIFY`: the store's own writes notify inside their
 * transactions (so a signal always arrives after its commit), one listening connection per
 * process fans them out to local subscribers. After the listener reconnects, every subscriber
 * gets a catch-up signal (`work`, and `event` with `seq: -1` per watched run) so nothing sent
 * while it was away is missed for long.
 */
/** The channel and payload a signal is notified with. */
export function notificationOf(channels: NotifyChannels, signal: Signal): readonly [string, string] {
  if (signal.kind === "work") return [channels.work, signal.planHash ?? ""];
  if (signal.kind === "cancel") return [channels.cancel, signal.runId];
  return [channels.events, `${signal.runId}:${signal.seq}${signal.status ? `:${signal.status}` : ""}`];
}

export function notifySignals(
  name: string,
  channels: NotifyChannels,
  transport: NotifyTransport,
  crossProcess: boolean,
): SignalsV1 & {
  /** Publishes committed writes' signals, batched and fire-and-forget (see `NotifyTransport.notifyBatch`). */
  publishCommitted(signals: readonly Signal[]): void;
} {
  // Heard from once the listener listens; whatever a reconnect's gap held may have been missed.
  const heard = new HeardRuns(false);
  const local = inProcessSignals(name, heard);
  const watched = new Map<string, number>();
  let started: Promise<void> | undefined;
  const start = () => {
    started ??= transport
      .start(
        (channel, payload) => {
          const signal = signalOf(channels, channel, payload);
          if (signal) local.deliver(signal);
        },
        () => {
          heard.lost();
          local.deliver({ kind: "work" });
          for (const runId of watched.keys()) local.deliver({ kind: "event", runId, seq: -1 });
        },
      )
      .then(() => heard.lost());
    return started;
  };
  return {
    specVersion: "v1",
    name,
    capabilities: { crossProcess, livePayloads: false, heardRuns: true },
    heardRuns: { specVersion: "v1", heard: (runId, since) => heard.heard(runId, since) },
    async publish(signal) {
      const [channel, payload] = notificationOf(channels, signal);
      await transport.notify(channel, payload);
    },
    publishCommitted(signals) {
      const notifications = signals.map((signal) => notificationOf(channels, signal));
      if (transport.notifyBatch) transport.notifyBatch(notifications);
      else for (const [channel, payload] of notifications) transport.notify(channel, payload).catch(() => {});
    },
    async subscribe(topic, listener) {
      await start();
      const runId = topic.startsWith("run:") ? topic.slice(4) : undefined;
      if (runId) watched.set(runId, (watched.get(runId) ?? 0) + 1);
      const stop = await local.subscribe(topic, listener);
      return async () => {
        await stop();
        if (runId) {
          const n = (watched.get(runId) ?? 1) - 1;
          if (n <= 0) watched.delete(runId);
          else watched.set(runId, n);
        }
      };
    },
    async close() {
      await local.close();
      if (started) await started.catch(() => {});
      await transport.stop();
    },
  };
}
