import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { OpenRathError } from "@openrath/core";
import { completionCommand } from "./commands/completion-command.js";
import { demoCommand } from "./commands/demo-command.js";
import { effectsCommand } from "./commands/effects-command.js";
import { interruptsCommand } from "./commands/interrupts-command.js";
import { lineageCommand } from "./commands/lineage-command.js";
import { migrateCommand } from "./commands/migrate-command.js";
import { replayCommand } from "./commands/replay-command.js";
import { runsCommand } from "./commands/runs-command.js";
import { sandboxesCommand } from "./commands/sandboxes-command.js";
import { serveCommand, workerCommand } from "./commands/serve-command.js";
import { sessionsCommand } from "./commands/sessions-command.js";
import { tokensCommand } from "./commands/tokens-command.js";
import { parseArgs, UsageError } from "./internal/args.js";
import { colors } from "./internal/colors.js";
import {
  type Command,
  type CommandContext,
  type CommandGroup,
  commandHelp,
  groupHelp,
} from "./internal/command.js";
import type { OutputStream } from "./internal/output-stream.js";
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

const COMMANDS: readonly (Command | CommandGroup)[] = [
  completionCommand(() => COMMANDS),
  demoCommand,
  effectsCommand,
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

function rootHelp(): string {
  const rows = COMMANDS.flatMap((c) => ("commands" in c ? c.commands : [c]));
  const width = Math.max(...rows.map((c) => c.name.length));
  return [
    "Usage: openrath <command> [options]",
    "",
    "OpenRath: sessions that fork, merge and remember, for multi-agent systems.",
    "",
    "Commands:",
    ...rows.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "Options:",
    "  -h, --help     Show help (also after any command).",
    "  -v, --version  Show the version.",
    "",
    'Run "openrath <command> --help" for a command\'s arguments and options.',
    "",
  ].join("\n");
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
    const [first, ...rest] = argv;
    if (first === undefined || first === "--help" || first === "-h") {
      stdout.write(rootHelp());
      return 0;
    }
    if (first === "--version" || first === "-v") {
      stdout.write(`openrath ${version()}\n`);
      return 0;
    }
    if (first === "help") return await main(rest.length > 0 ? [...rest, "--help"] : [], io);
    const found = COMMANDS.find((c) => c.name === first);
    if (!found) {
      const hint = first.startsWith("-") ? "an option needs a command before it" : "unknown command";
      throw new UsageError(
        `${hint}: ${JSON.stringify(first)}; commands: ${COMMANDS.map((c) => c.name).join(", ")}; see openrath --help`,
      );
    }
    let command: Command;
    let words: string[];
    if ("commands" in found) {
      const [sub, ...subRest] = rest;
      if (sub === undefined || sub === "--help" || sub === "-h") {
        stdout.write(groupHelp(found));
        return 0;
      }
      const match = found.commands.find((c) => c.name === `${found.name} ${sub}`);
      if (!match) {
        throw new UsageError(
          `unknown command ${JSON.stringify(`${found.name} ${sub}`)}; ${found.name} commands: ${found.commands
            .map((c) => c.name.split(" ").at(-1))
            .join(", ")}; see openrath ${found.name} --help`,
        );
      }
      command = match;
      words = subRest;
    } else {
      command = found;
      words = rest;
    }
    // `pnpm demo -- --record x` hands the separator through; a command without arguments has no use for it.
    if (words[0] === "--" && command.args.length === 0) words = words.slice(1);
    const parsed = parseArgs(words, {
      command: `openrath ${command.name}`,
      args: command.args,
      options: command.options,
    });
    if (parsed.help) {
      stdout.write(commandHelp(command));
      return 0;
    }
    return (await command.run(ctx, parsed)) ?? 0;
  } catch (error) {
    const usage = error instanceof UsageError;
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
