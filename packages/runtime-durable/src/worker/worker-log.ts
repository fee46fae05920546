import type { StepLogger } from "../contract/step-context.js";

/** A log level, lowest first. */
export type LogLevel = keyof StepLogger;

/**
 * Where a worker's structured log lines go: one call per event that matters (start, claims, a
 * lease lost, the store unreachable and back, a park, a reclaim, a stop) and the steps' own
 * `ctx.logger` lines. `data` holds plain fields (ids, counts, codes).
 */
export type WorkerLog = (level: LogLevel, message: string, data?: Record<string, unknown>) => void;

const RANK: Record<LogLevel | "silent", number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

/** Options of {@link jsonLinesLog}. */
export interface JsonLinesLogOptions {
  /** The lowest level written (default `OPENRATH_LOG_LEVEL`, else `"info"`); `"silent"` writes nothing. */
  readonly level?: LogLevel | "silent";
  /** Where each line goes (default: standard error). */
  readonly write?: (line: string) => void;
  /** Fields on every line (such as the worker id). */
  readonly fields?: Record<string, unknown>;
}

function levelOf(value: string | undefined): LogLevel | "silent" {
  const level = value?.toLowerCase();
  return level !== undefined && level in RANK ? (level as LogLevel | "silent") : "info";
}

function plain(value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message };
  if (typeof value === "bigint") return String(value);
  return value;
}

/**
 * A {@link WorkerLog} writing one JSON object per line — `time`, `level`, `msg`, then the fields —
 * the default of every worker. Replace it with the `log` option (an adapter to pino or any logger
 * is one function), or set `OPENRATH_LOG_LEVEL=silent`.
 */
export function jsonLinesLog(options: JsonLinesLogOptions = {}): WorkerLog {
  const threshold = RANK[options.level ?? levelOf(process.env.OPENRATH_LOG_LEVEL)];
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const fields = options.fields ?? {};
  return (level, message, data) => {
    if (RANK[level] < threshold) return;
    const line: Record<string, unknown> = { time: new Date().toISOString(), level, msg: message, ...fields };
    for (const [key, value] of Object.entries(data ?? {})) line[key] = plain(value);
    write(JSON.stringify(line));
  };
}
