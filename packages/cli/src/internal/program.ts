import { Argument, Command as Cli, CommanderError, Help, Option } from "commander";
import { type ArgSpec, type OptionSpec, type ParsedArgs, UsageError } from "./args.js";
import type { Command, CommandGroup } from "./command.js";
import type { OutputStream } from "./output-stream.js";

/** Every command of `openrath`, in the order help lists them. */
export type CommandTree = readonly (Command | CommandGroup)[];

/** What {@link runProgram} parses against and where it writes help. */
export interface ProgramOptions {
  readonly commands: CommandTree;
  /** Printed by `--version`. */
  readonly version: string;
  /** Help and the version go here. Errors are not written: they are thrown. */
  readonly stdout: OutputStream;
  /** Runs the command the line named with what it was given; returns its exit status. */
  run(command: Command, parsed: ParsedArgs): Promise<number | undefined>;
}

const PROGRAM = "openrath";

/**
 * Parses `argv` (the words after the program name) with commander against the declared commands
 * and runs the one it names. Returns the exit status: 0 after help or the version, else the
 * command's. Never exits the process and writes nothing to stderr (see ADR 0030).
 *
 * @throws {UsageError} for a command line that names nothing runnable: an unknown command or
 *   option, a missing or extra argument, a value outside an option's choices.
 */
export async function runProgram(argv: readonly string[], options: ProgramOptions): Promise<number> {
  let status = 0;
  const program = createProgram({
    ...options,
    run: async (command, parsed) => {
      status = (await options.run(command, parsed)) ?? 0;
      return status;
    },
  });
  try {
    await program.parseAsync(normalize(argv, options.commands), { from: "user" });
  } catch (error) {
    // Help and --version end the parse through the exit override, with status 0.
    if (error instanceof CommanderError && error.exitCode === 0) return 0;
    throw error;
  }
  return status;
}

/**
 * The commander program for `commands`: one commander command per declared command, each with
 * its arguments, options, help and examples, and errors turned into {@link UsageError}s.
 */
export function createProgram(options: ProgramOptions): Cli {
  const { commands } = options;
  const program = new Cli(PROGRAM)
    .usage("<command> [options]")
    .description("OpenRath: sessions that fork, merge and remember, for multi-agent systems.")
    .version(options.version, "-v, --version", "Show the version.")
    // The program's own options (-v) come before a command only: `runs list -v` is not a version query.
    .enablePositionalOptions()
    .helpCommand("help [command]", "Show help for a command.")
    .addHelpText("after", `\nRun "${PROGRAM} <command> --help" for a command's arguments and options.`);
  configure(program, options, {
    path: PROGRAM,
    unknownOption: (flag) =>
      `an option needs a command before it: ${JSON.stringify(flag)}; commands: ${commands.map((c) => c.name).join(", ")}; see ${PROGRAM} --help`,
    unknownCommand: (word, hint) =>
      `unknown command: ${JSON.stringify(word)}; commands: ${commands.map((c) => c.name).join(", ")}${hint}; see ${PROGRAM} --help`,
  });
  for (const entry of commands) {
    program.addCommand("commands" in entry ? groupCommand(entry, options) : leafCommand(entry, options));
  }
  return program;
}

/** The words commander should see: help for a bare group, `help <words>` as `<words> --help`. */
function normalize(argv: readonly string[], commands: CommandTree): string[] {
  // A program or a group named alone is a request for its help (commander would call it an error).
  if (argv.length === 0) return ["--help"];
  if (argv[0] === "help") return [...argv.slice(1), "--help"];
  const top = commands.find((c) => c.name === argv[0]);
  if (!top) return [...argv];
  if (!("commands" in top)) return dropSeparator(argv, 1, top);
  if (argv.length === 1) return [argv[0]!, "--help"];
  const leaf = top.commands.find((c) => c.name === `${top.name} ${argv[1]}`);
  return leaf ? dropSeparator(argv, 2, leaf) : [...argv];
}

/** `pnpm demo -- --record x` hands the separator through; a command without arguments has no use for it. */
function dropSeparator(argv: readonly string[], at: number, command: Command): string[] {
  if (argv[at] !== "--" || command.args.length > 0) return [...argv];
  return [...argv.slice(0, at), ...argv.slice(at + 1)];
}

function groupCommand(group: CommandGroup, options: ProgramOptions): Cli {
  const cli = new Cli(group.name)
    .usage("<command> [options]")
    .helpCommand("help [command]", "Show help for a command.")
    .summary(group.summary)
    .description(group.description ? `${group.summary}\n\n${group.description}` : group.summary)
    .addHelpText("after", `\nRun "${PROGRAM} ${group.name} <command> --help" for a command's options.`);
  const words = group.commands.map((c) => lastWord(c.name));
  configure(cli, options, {
    path: `${PROGRAM} ${group.name}`,
    unknownCommand: (word, hint) =>
      `unknown command ${JSON.stringify(`${group.name} ${word}`)}; ${group.name} commands: ${words.join(", ")}${hint}; see ${PROGRAM} ${group.name} --help`,
  });
  for (const command of group.commands) cli.addCommand(leafCommand(command, options));
  return cli;
}

function leafCommand(command: Command, options: ProgramOptions): Cli {
  const cli = new Cli(lastWord(command.name))
    .summary(command.summary)
    .description(command.description ? `${command.summary}\n\n${command.description}` : command.summary);
  for (const arg of command.args) cli.addArgument(argument(arg));
  const declared = command.options.map((spec) => ({ spec, option: option(spec) }));
  for (const { option } of declared) cli.addOption(option);
  if (command.examples && command.examples.length > 0) {
    cli.addHelpText("after", `\nExamples:\n${command.examples.map((e) => `  ${e}`).join("\n")}`);
  }
  configure(cli, options, {
    path: `${PROGRAM} ${command.name}`,
    args: command.args,
    options: command.options,
  });
  cli.action(async () => {
    const given: Record<string, string | true> = {};
    for (const { spec, option } of declared) {
      const key = option.attributeName();
      if (cli.getOptionValueSource(key) !== "cli") continue;
      const value: unknown = cli.getOptionValue(key);
      // A `--no-x` flag sets x to false in commander; the command asks for `no-x`.
      given[spec.name] = typeof value === "string" ? value : true;
    }
    await options.run(command, { positionals: [...cli.args], options: given, help: false });
  });
  return cli;
}

function argument(spec: ArgSpec): Argument {
  const inner = spec.name.replace(/^[<[]/, "").replace(/[>\]]$/, "");
  return new Argument(spec.optional ? `[${inner}]` : `<${inner}>`, spec.description);
}

function option(spec: OptionSpec): Option {
  const flags = `${spec.short ? `-${spec.short}, ` : ""}--${spec.name}${spec.value ? ` ${spec.value}` : ""}`;
  const choices = spec.choices;
  const made = new Option(flags, choices ? `${spec.description} (${choices.join(", ")})` : spec.description);
  if (choices) {
    // Our own check rather than .choices(): its message is one line we word, like the rest.
    made.argParser((value: string) => {
      if (!choices.includes(value)) {
        throw new UsageError(
          `option --${spec.name} must be one of ${choices.join(", ")}; got ${JSON.stringify(value)}`,
          { option: spec.name, value, choices },
        );
      }
      return value;
    });
  }
  return made;
}

interface Messages {
  /** The command as typed: `openrath runs list`. */
  readonly path: string;
  /** A runnable command's arguments and options (absent for the program and groups). */
  readonly args?: readonly ArgSpec[];
  readonly options?: readonly OptionSpec[];
  unknownOption?(flag: string): string;
  /** `hint` is empty or ` (did you mean x?)`. */
  unknownCommand?(word: string, hint: string): string;
}

/** Settings every command shares: output to our streams, help wording, errors as UsageError. */
function configure(cli: Cli, options: ProgramOptions, messages: Messages): void {
  const { stdout } = options;
  cli
    .helpOption("-h, --help", "Show help.")
    .configureOutput({
      writeOut: (text) => void stdout.write(text),
      // Commander writes errors and help-on-error here; ours are thrown and printed by main().
      writeErr: () => {},
      outputError: () => {},
      // Help fills the terminal; off a terminal lines are not wrapped (for grep and files).
      getOutHelpWidth: () => (stdout.isTTY && stdout.columns ? stdout.columns : Number.POSITIVE_INFINITY),
      getOutHasColors: () => false,
      getErrHasColors: () => false,
    })
    .configureHelp({ visibleCommands, subcommandTerm })
    .exitOverride((error) => {
      throw usageError(cli, error, messages);
    });
}

/** Help lists runnable commands: a group's commands appear under their full names. */
function visibleCommands(this: Help, cli: Cli): Cli[] {
  return Help.prototype.visibleCommands
    .call(this, cli)
    .flatMap((sub) => (sub.commands.length > 0 ? [...sub.commands] : [sub]));
}

/** `sessions show <id | path>`: the words after the program name and the arguments. */
function subcommandTerm(cli: Cli): string {
  // The implicit help command has no parent: it is listed under its own name.
  const names: string[] = cli.parent ? [] : [cli.name()];
  for (let at: Cli | null = cli; at?.parent; at = at.parent) names.unshift(at.name());
  const args = cli.registeredArguments.map((a) => (a.required ? `<${a.name()}>` : `[${a.name()}]`));
  return [...names, ...args].join(" ");
}

/** Commander's exit (an error, or help and the version with status 0) as what main() reports. */
function usageError(cli: Cli, error: CommanderError, messages: Messages): Error {
  if (error.exitCode === 0 || error.code === "commander.help") {
    return new CommanderError(0, error.code, error.message);
  }
  const { path } = messages;
  const seeHelp = `see ${path} --help`;
  const quoted = /'([^\n]*)'/.exec(error.message)?.[1];
  const suggested = /\(Did you mean ([^?]+)\?\)/.exec(error.message)?.[1];
  const hint = suggested ? ` (did you mean ${suggested}?)` : "";
  const details = { commander: error.code };
  switch (error.code) {
    case "commander.unknownOption": {
      const flag = quoted ?? "";
      return new UsageError(
        messages.unknownOption?.(flag) ?? `unknown option ${flag} for ${path}${hint}; ${seeHelp}`,
        { ...details, option: flag },
      );
    }
    case "commander.unknownCommand": {
      const word = cli.args[0] ?? "";
      return new UsageError(
        messages.unknownCommand?.(word, hint) ??
          `unknown command ${JSON.stringify(word)} for ${path}; ${seeHelp}`,
        { ...details, command: word },
      );
    }
    case "commander.missingArgument": {
      const missing = messages.args?.[cli.args.length]?.name ?? `<${quoted}>`;
      return new UsageError(`${path} needs ${missing}; ${seeHelp}`, { ...details, missing });
    }
    case "commander.excessArguments": {
      const extra = cli.args[cli.registeredArguments.length] ?? "";
      return new UsageError(`unexpected argument ${JSON.stringify(extra)} for ${path}; ${seeHelp}`, {
        ...details,
        argument: extra,
      });
    }
    case "commander.optionMissingArgument": {
      const long = cli.options.find((o) => o.flags === quoted)?.long;
      const spec = messages.options?.find((o) => `--${o.name}` === long);
      return new UsageError(
        `option --${spec?.name ?? quoted} needs a value ${spec?.value ?? ""}; ${seeHelp}`,
        {
          ...details,
          option: spec?.name ?? quoted,
        },
      );
    }
    default:
      return new UsageError(
        `${error.message.replace(/^error: /, "").replace(/\s*\n\s*/g, " ")}; ${seeHelp}`,
        details,
      );
  }
}

function lastWord(name: string): string {
  return name.split(" ").at(-1) ?? name;
}
