import { join } from "node:path";
import type { MemoryV1 } from "@openrath/core";
import type { ArtifactStoreV1, RunStoreV1, SignalsV1 } from "@openrath/runtime-durable";
import { type Config, stateDir } from "../config.js";
import type { CommandContext } from "../internal/command.js";

type Options = Readonly<Record<string, string | true | undefined>>;

/** What `serve` and `worker` run on, chosen by the configuration. */
export interface Backends {
  /** The run store, large payloads offloaded to `artifacts` when there is one. */
  readonly store: RunStoreV1;
  /** Redis with `REDIS_URL`; in-process on the embedded store; else the store's own notifications. */
  readonly signals: SignalsV1 | undefined;
  readonly artifacts: ArtifactStoreV1 | undefined;
  /** The memory store `serve` fronts (`serve` only). */
  readonly memory: MemoryV1 | undefined;
  /** One line per backend, for the start-up banner. */
  readonly lines: readonly string[];
  /** Closes the memory store (the runtime closes the store and the signals). */
  close(): Promise<void>;
}

/**
 * Opens the backends: PostgreSQL with `DATABASE_URL`, else PGlite under `--state`; Redis signals
 * with `REDIS_URL`; an S3 bucket for large payloads with `OPENRATH_S3_BUCKET`, else the filesystem
 * beside the embedded database (PostgreSQL alone keeps them in its rows); and for `serve` a
 * full-text memory store in `OPENRATH_MEMORY_DIR` (default beside the embedded database).
 */
export async function openBackends(
  ctx: CommandContext,
  config: Config,
  options: Options,
  role: "serve" | "worker",
): Promise<Backends> {
  const { pgliteStore, postgresStore } = await import("@openrath/store-postgres");
  const runtime = await import("@openrath/runtime-durable");
  const { inProcessSignals } = await import("@openrath/runtime-durable/store");
  const state = stateDir(ctx, config, options);
  const lines: string[] = [];
  const closers: (() => Promise<void>)[] = [];

  let store: RunStoreV1;
  if (config.DATABASE_URL) {
    store = await postgresStore({ connectionString: config.DATABASE_URL, schema: config.OPENRATH_DB_SCHEMA });
    lines.push("store      PostgreSQL (DATABASE_URL)");
  } else {
    const dataDir = join(state, "db");
    store = await pgliteStore({ dataDir });
    lines.push(`store      ${dataDir}`);
  }
  try {
    let signals: SignalsV1 | undefined;
    if (config.REDIS_URL) {
      const { redisSignals } = await import("@openrath/signals-redis");
      // The runtime closes the signals it is given.
      signals = redisSignals({ url: config.REDIS_URL, fallback: store.signals });
      lines.push("signals    Redis (REDIS_URL), the store's notifications as fallback");
    } else if (!config.DATABASE_URL) {
      // The embedded store is one process's: in-process signals reach every follower, live token
      // deltas included (its own notifications carry no live payloads).
      signals = inProcessSignals();
    }

    let artifacts: ArtifactStoreV1 | undefined;
    if (config.OPENRATH_S3_BUCKET) {
      const { s3ArtifactStore } = await import("@openrath/artifacts-s3");
      const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey } = config;
      artifacts = s3ArtifactStore({
        bucket: config.OPENRATH_S3_BUCKET,
        region: config.OPENRATH_S3_REGION,
        ...(config.OPENRATH_S3_ENDPOINT
          ? { endpoint: config.OPENRATH_S3_ENDPOINT, forcePathStyle: true }
          : {}),
        ...(accessKeyId && secretAccessKey ? { credentials: { accessKeyId, secretAccessKey } } : {}),
      });
      lines.push(`artifacts  s3://${config.OPENRATH_S3_BUCKET}`);
    } else if (!config.DATABASE_URL) {
      const root = join(state, "artifacts");
      artifacts = runtime.filesystemArtifactStore({ root });
      lines.push(`artifacts  ${root}`);
    }
    if (artifacts) store = runtime.withArtifactOffload(store, { artifacts });

    let memory: MemoryV1 | undefined;
    const memoryDir =
      config.OPENRATH_MEMORY_DIR !== undefined
        ? ctx.resolve(config.OPENRATH_MEMORY_DIR)
        : config.DATABASE_URL
          ? undefined
          : join(state, "memory");
    if (role === "serve" && memoryDir !== undefined) {
      const { bm25Memory } = await import("@openrath/memory-bm25");
      const opened = await bm25Memory().open({ path: memoryDir });
      memory = opened;
      closers.push(() => opened.close());
      lines.push(`memory     ${memoryDir}`);
    }
    return {
      store,
      signals,
      artifacts,
      memory,
      lines,
      close: async () => {
        for (const close of closers.reverse()) await close().catch(() => {});
      },
    };
  } catch (error) {
    for (const close of closers.reverse()) await close().catch(() => {});
    await store.close();
    throw error;
  }
}
