import { OpenRathError } from "@openrath/core";

/** An option of a command: a flag (no `value`) or an option taking a value. */
export interface OptionSpec {
  /** Long name without dashes: `format` for `--format`. */
  readonly name: string;
  /** One-letter alias without the dash: `o` for `-o`. */
  readonly short?: string;
  /** Placeholder of the value in help (`<file>`); absent for a flag. */
  readonly value?: string;
  /** The values allowed, if limited. */
  readonly choices?: readonly string[];
  readonly description: string;
}

/** A positional argument of a command. */
export interface ArgSpec {
  readonly name: string;
  readonly description: string;
  readonly optional?: boolean;
}

/** What a command accepts, for {@link parseArgs}. */
export interface ArgsSpec {
  /** The command as typed, for messages: `openrath lineage`. */
  readonly command: string;
  readonly args: readonly ArgSpec[];
  readonly options: readonly OptionSpec[];
}

/** Parsed arguments. */
export interface ParsedArgs {
  /** Positional arguments, in order. */
  readonly positionals: readonly string[];
  /** Option values by long name: a string for options with a value, `true` for flags. */
  readonly options: Readonly<Record<string, string | true>>;
  /** Whether `--help` or `-h` was given (the rest is then not validated). */
  readonly help: boolean;
}

/**
 * A command line the CLI cannot act on: an unknown command or option, a missing or extra argument,
 * a bad value. The CLI prints its message as one line and exits with status 2.
 */
export class UsageError extends OpenRathError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super("usage", message, { details });
  }
}

/**
 * Parses `argv` (the words after the command) against `spec`: `--name value`, `--name=value`,
 * `-n value`, flags, and `--` to end options. A later occurrence of an option wins.
 *
 * @throws {UsageError} for an unknown option, a missing value, a value given to a flag, a value
 *   outside `choices`, a missing required argument or an extra argument.
 */
export function parseArgs(argv: readonly string[], spec: ArgsSpec): ParsedArgs {
  const positionals: string[] = [];
  const options: Record<string, string | true> = {};
  const seeHelp = `see ${spec.command} --help`;
  if (argv.some((a, i) => (a === "--help" || a === "-h") && !argv.slice(0, i).includes("--"))) {
    return { positionals: [], options: {}, help: true };
  }
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!word.startsWith("-") || word === "-") {
      positionals.push(word);
      continue;
    }
    let name: string;
    let inline: string | undefined;
    let option: OptionSpec | undefined;
    if (word.startsWith("--")) {
      const eq = word.indexOf("=");
      name = eq >= 0 ? word.slice(2, eq) : word.slice(2);
      inline = eq >= 0 ? word.slice(eq + 1) : undefined;
      option = spec.options.find((o) => o.name === name);
    } else {
      name = word.slice(1);
      option = name.length === 1 ? spec.options.find((o) => o.short === name) : undefined;
    }
    const shown = word.startsWith("--") ? `--${name}` : word;
    if (!option) {
      const near = spec.options.find((o) => o.name.startsWith(name) || name.startsWith(o.name));
      throw new UsageError(
        `unknown option ${shown} for ${spec.command}${near ? ` (did you mean --${near.name}?)` : ""}; ${seeHelp}`,
        { option: shown },
      );
    }
    if (option.value === undefined) {
      if (inline !== undefined) {
        throw new UsageError(`option --${option.name} is a flag and takes no value; ${seeHelp}`, {
          option: option.name,
        });
      }
      options[option.name] = true;
      continue;
    }
    let value = inline;
    if (value === undefined) {
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith("-") && next !== "-")) {
        throw new UsageError(`option --${option.name} needs a value ${option.value}; ${seeHelp}`, {
          option: option.name,
        });
      }
      value = next;
      i++;
    }
    if (option.choices && !option.choices.includes(value)) {
      throw new UsageError(
        `option --${option.name} must be one of ${option.choices.join(", ")}; got ${JSON.stringify(value)}`,
        { option: option.name, value, choices: option.choices },
      );
    }
    options[option.name] = value;
  }
  const required = spec.args.filter((a) => !a.optional).length;
  if (positionals.length < required) {
    const missing = spec.args[positionals.length]!;
    throw new UsageError(`${spec.command} needs ${missing.name}; ${seeHelp}`, { missing: missing.name });
  }
  if (positionals.length > spec.args.length) {
    const extra = positionals[spec.args.length]!;
    throw new UsageError(`unexpected argument ${JSON.stringify(extra)} for ${spec.command}; ${seeHelp}`, {
      argument: extra,
    });
  }
  return { positionals, options, help: false };
}
