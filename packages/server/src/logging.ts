import type { WorkerLog } from "@openrath/runtime-durable";
import { type DestinationStream, type Logger, pino } from "pino";

/** The levels a {@link serverLogger} takes, lowest first; `silent` writes nothing. */
export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;

/** A log level of {@link LOG_LEVELS}. */
export type ServerLogLevel = (typeof LOG_LEVELS)[number];

/** Options of {@link serverLogger}. */
export interface ServerLoggerOptions {
  /** The lowest level written (default `"info"`). */
  readonly level?: ServerLogLevel;
  /**
   * Where the lines go (default standard output): any writable stream, such as `pino-pretty`'s
   * for a terminal or a file.
   */
  readonly destination?: DestinationStream;
  /** Fields on every line (a process name, a worker id). */
  readonly base?: Record<string, unknown>;
}

/**
 * Paths never written: credentials in request headers, and the fields that would carry a message,
 * a tool's arguments or a secret if a caller put them on a line. Their values become `[redacted]`.
 */
const REDACT = [
  "req.headers.authorization",
  "req.headers.cookie",
  'req.headers["x-api-key"]',
  "authorization",
  "password",
  "secret",
  "token",
  "content",
  "input",
  "messages",
  "arguments",
];

/**
 * A pino logger for the Agent Server (`ServerOptions.logger`) and its process: one JSON object per
 * line — `level` as a name, `time` in ISO 8601, `msg`, then the fields — with credentials and
 * content fields redacted.
 *
 * @example
 * ```ts
 * const logger = serverLogger({ level: "info" });
 * const server = await createServer({ runtime, logger });
 * const worker = runtime.worker({ log: workerLogOf(logger) });
 * ```
 */
export function serverLogger(options: ServerLoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? "info",
      base: options.base ?? null,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT, censor: "[redacted]" },
    },
    options.destination ?? pino.destination({ fd: 1, sync: false }),
  );
}

/**
 * The worker's log hook (`WorkerOptions.log`) writing through `logger`: the worker's lines (and
 * its steps' `ctx.logger` lines, with run, step and attempt) at their level, each with the worker
 * id (and the run's trace id where the step has one).
 */
export function workerLogOf(logger: Logger): WorkerLog {
  return (level, message, data) => {
    if (!logger.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(data ?? {}))
      fields[key] = value instanceof Error ? { name: value.name, message: value.message } : value;
    logger[level](fields, message);
  };
}
