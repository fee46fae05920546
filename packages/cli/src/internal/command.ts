import type { ArgSpec, OptionSpec, ParsedArgs } from "./args.js";
import type { Colors } from "./colors.js";
import type { OutputStream } from "./output-stream.js";
import type { Progress } from "./progress.js";

/** What a command runs with. */
export interface CommandContext {
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The directory relative paths resolve against. */
  readonly cwd: string;
  /** The current time in epoch milliseconds (a clock tests can set). */
  now(): number;
  /** Colours for stdout. */
  readonly out: Colors;
  /** Colours for stderr. */
  readonly err: Colors;
  /**
   * A progress display on stderr: a spinner on a terminal, plain lines otherwise (unless `plain`
   * is false, for quick work that should stay silent off a terminal).
   */
  progress(options?: { readonly plain?: boolean }): Progress;
  /** `path` resolved against {@link CommandContext.cwd}. */
  resolve(path: string): string;
}

/**
 * One runnable command, such as `lineage` or `sessions prune`: a declaration that
 * `createProgram` (internal/program.ts) turns into the command-line parser and its help.
 */
export interface Command {
  /** The words after `openrath`: `lineage`, `sessions prune`. */
  readonly name: string;
  /** One line for command lists. */
  readonly summary: string;
  /** Paragraphs for `--help`. */
  readonly description?: string;
  readonly args: readonly ArgSpec[];
  readonly options: readonly OptionSpec[];
  readonly examples?: readonly string[];
  /** Runs the command; returns the exit status (default 0). */
  run(ctx: CommandContext, args: ParsedArgs): Promise<number | undefined>;
}

/** A command with subcommands, such as `sessions`. */
export interface CommandGroup {
  readonly name: string;
  readonly summary: string;
  readonly description?: string;
  readonly commands: readonly Command[];
}
