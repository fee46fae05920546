import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { OpenRathError } from "@openrath/core";
import { completionCommand } from "./commands/completion-command.js";
import { demoCommand } from "./commands/demo-command.js";
import { effectsCommand } from "./commands/effects-command.js";
import { importCommand } from "./commands/import-command.js";
import { interruptsCommand } from "./commands/interrupts-command.js";
import { lineageCommand } from "./commands/lineage-command.js";
import { migrateCommand } from "./commands/migrate-command.js";
import { replayCommand } from "./commands/replay-command.js";
import { runsCommand } from "./commands/runs-command.js";
import { sandboxesCommand } from "./commands/sandboxes-command.js";
import { serveCommand, workerCommand } from "./commands/serve-command.js";
import { sessionsCommand } from "./commands/sessions-command.js";
import { tokensCommand } from "./commands/tokens-command.js";
import { colors } from "./internal/colors.js";
import type { CommandContext } from "./internal/command.js";
import type { OutputStream } from "./internal/output-stream.js";
import { type CommandTree, runProgram } from "./internal/program.js";
import { createProgress } from "./internal/progress.js";

export type { OutputStream } from "./internal/output-stream.js";

/** Where {@link main} reads its environment and writes its output. Every field has a process default. */
export interface CliIO {
  /** Results (default `process.stdout`). */
  readonly stdout?: OutputStream;
  /** Progress, notes and errors (default `process.stderr`). */
  readonly stderr?: OutputStream;
  /** Environment variables (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The directory relative paths resolve against (default `process.cwd()`). */
  readonly cwd?: string;
  /** The clock, in epoch milliseconds (default `Date.now`). */
  readonly now?: () => number;
}

/**
 * Every command of `openrath`. A new command is one file in `commands/` exporting a `Command` (or a
 * `CommandGroup`, or a command to add to one) and one line here; parsing, help and completion
 * follow from the declaration.
 */
export const COMMANDS: CommandTree = [
  completionCommand(() => COMMANDS),
  demoCommand,
  effectsCommand,
  importCommand,
  interruptsCommand,
  lineageCommand,
  migrateCommand,
  replayCommand,
  runsCommand,
  sandboxesCommand,
  serveCommand,
  sessionsCommand,
  tokensCommand,
  workerCommand,
];

function version(): string {
  try {
    return (
      JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
    ).version;
  } catch {
    return "unknown";
  }
}

/** One line: what failed, and the stable code of an OpenRath error. */
function errorLine(error: unknown): string {
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, " ").trim();
  const code = OpenRathError.isInstance(error) ? error.code : undefined;
  return code && code !== "usage" ? `${message} [${code}]` : message;
}

/**
 * Runs the `openrath` command line: `argv` are the words after the program name. Returns the exit
 * status: 0 on success, 1 when the work failed (or a replay diverged), 2 for a command line it
 * cannot act on. Errors are printed to stderr as one line `openrath: <message> [<code>]`; set
 * `OPENRATH_DEBUG=1` for the stack.
 *
 * @example
 * ```ts
 * process.exitCode = await main(process.argv.slice(2));
 * ```
 */
export async function main(argv: readonly string[], io: CliIO = {}): Promise<number> {
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  const env = io.env ?? process.env;
  const cwd = io.cwd ?? launchDirectory(env);
  const err = colors(stderr, env);
  const ctx: CommandContext = {
    stdout,
    stderr,
    env,
    cwd,
    now: io.now ?? Date.now,
    out: colors(stdout, env),
    err,
    progress: (options = {}) => createProgress(stderr, { colors: err, ...options }),
    resolve: (path) => resolve(cwd, path),
  };
  try {
    return await runProgram(argv, {
      commands: COMMANDS,
      version: `openrath ${version()}`,
      stdout,
      run: (command, parsed) => command.run(ctx, parsed),
    });
  } catch (error) {
    const usage = OpenRathError.isInstance(error, "usage");
    stderr.write(`${err.red("openrath:")} ${errorLine(error)}\n`);
    if (env.OPENRATH_DEBUG && env.OPENRATH_DEBUG !== "0" && error instanceof Error && error.stack) {
      stderr.write(`${error.stack}\n`);
    }
    return usage ? 2 : 1;
  }
}

/**
 * The directory the user ran the command from: a package script (`pnpm demo`) runs in the package's
 * folder, and pnpm and npm keep the user's directory in `INIT_CWD`.
 */
function launchDirectory(env: Readonly<Record<string, string | undefined>>): string {
  return env.npm_lifecycle_event && env.INIT_CWD ? env.INIT_CWD : process.cwd();
}
