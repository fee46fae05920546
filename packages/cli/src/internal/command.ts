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

/** One runnable command, such as `lineage` or `sessions prune`. */
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

/** The `--help` text of a command. */
export function commandHelp(command: Command): string {
  const usageArgs = command.args.map((a) => (a.optional ? `[${a.name}]` : a.name)).join(" ");
  const lines = [
    `Usage: openrath ${command.name}${usageArgs ? ` ${usageArgs}` : ""}${command.options.length > 0 ? " [options]" : ""}`,
    "",
    command.summary,
  ];
  if (command.description) lines.push("", command.description);
  if (command.args.length > 0) {
    lines.push("", "Arguments:");
    const width = Math.max(...command.args.map((a) => a.name.length));
    for (const a of command.args) lines.push(`  ${a.name.padEnd(width)}  ${a.description}`);
  }
  const options = [
    ...command.options,
    { name: "help", short: "h", description: "Show this help." } satisfies OptionSpec,
  ];
  const flag = (o: OptionSpec) =>
    `${o.short ? `-${o.short}, ` : "    "}--${o.name}${o.value ? ` ${o.value}` : ""}`;
  const width = Math.max(...options.map((o) => flag(o).length));
  lines.push("", "Options:");
  for (const o of options) {
    const choices = o.choices ? ` (${o.choices.join(", ")})` : "";
    lines.push(`  ${flag(o).padEnd(width)}  ${o.description}${choices}`);
  }
  if (command.examples && command.examples.length > 0) {
    lines.push("", "Examples:", ...command.examples.map((e) => `  ${e}`));
  }
  return `${lines.join("\n")}\n`;
}

/** The `--help` text of a command group. */
export function groupHelp(group: CommandGroup): string {
  const width = Math.max(...group.commands.map((c) => c.name.length));
  const lines = [`Usage: openrath ${group.name} <command> [options]`, "", group.summary];
  if (group.description) lines.push("", group.description);
  lines.push("", "Commands:");
  for (const c of group.commands) lines.push(`  ${c.name.padEnd(width)}  ${c.summary}`);
  lines.push("", `Run "openrath ${group.name} <command> --help" for a command's options.`);
  return `${lines.join("\n")}\n`;
}
