import { OpenRathError } from "@openrath/core";

/** An option of a command: a flag (no `value`) or an option taking a value. */
export interface OptionSpec {
  /** Long name without dashes: `format` for `--format`. A `no-` name (`no-worker`) is a flag. */
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
  /** As help shows it: `<log>`, `<run id>`, `[extra]`. */
  readonly name: string;
  readonly description: string;
  readonly optional?: boolean;
}

/** What a command receives from the command line. */
export interface ParsedArgs {
  /** Positional arguments, in order. */
  readonly positionals: readonly string[];
  /**
   * The options given, by long name: a string for options with a value, `true` for flags. An
   * option not on the command line is absent (defaults are the command's to apply).
   */
  readonly options: Readonly<Record<string, string | true>>;
  /** Always false when a command runs (help is answered before); kept for the command shape. */
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
