import { UsageError } from "../internal/args.js";
import type { Command, CommandGroup } from "../internal/command.js";

type Tree = readonly (Command | CommandGroup)[];

const SHELLS = ["bash", "zsh", "fish"] as const;
type Shell = (typeof SHELLS)[number];

/** Every runnable command, groups flattened: `runs list`, `lineage`. */
const leaves = (commands: Tree) => commands.flatMap((c) => ("commands" in c ? c.commands : [c]));
const groups = (commands: Tree) => commands.filter((c): c is CommandGroup => "commands" in c);
const sub = (command: Command) => command.name.split(" ").at(-1) ?? command.name;
/** The first words: the commands, `help`, and the program's options. */
const firstWords = (commands: Tree) => [...commands.map((c) => c.name), "help", "--help", "--version"];
const longOptions = (command: Command) => [...command.options.map((o) => `--${o.name}`), "--help"];

/**
 * The `case` arms shared by bash and zsh: the options of each command, first under its full name
 * (`runs list`), then a top-level command under its own name alone.
 */
function optionCases(commands: Tree, indent: string): { full: string; single: string } {
  const arm = (name: string, command: Command) =>
    `${indent}"${name}") opts="${longOptions(command).join(" ")}" ;;`;
  return {
    full: leaves(commands)
      .map((c) => arm(c.name, c))
      .join("\n"),
    single: commands
      .filter((c): c is Command => !("commands" in c))
      .map((c) => arm(c.name, c))
      .join("\n"),
  };
}

const groupCases = (commands: Tree, indent: string) =>
  groups(commands)
    .map((g) => `${indent}"${g.name}") words="${g.commands.map(sub).join(" ")}" ;;`)
    .join("\n");

/** A bash completion script for `commands`: command words, then each command's options. */
export function bashCompletion(commands: Tree): string {
  const cases = optionCases(commands, "    ");
  return `# bash completion for openrath: source it, or put it in your bash-completion directory.
_openrath() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" words="" opts=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${firstWords(commands).join(" ")}" -- "$cur"))
    return
  fi
  local first="\${COMP_WORDS[1]}" second="\${COMP_WORDS[2]}"
  if [ "$COMP_CWORD" -eq 2 ]; then
    case "$first" in
${groupCases(commands, "    ")}
      help) words="${commands.map((c) => c.name).join(" ")}" ;;
    esac
    if [ -n "$words" ]; then COMPREPLY=($(compgen -W "$words" -- "$cur")); return; fi
  fi
  case "$first $second" in
${cases.full}
  esac
  if [ -z "$opts" ]; then
    case "$first" in
${cases.single}
    esac
  fi
  COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -o default -F _openrath openrath
`;
}

/** A zsh completion script: the same words as bash, through compadd; files where no option is typed. */
export function zshCompletion(commands: Tree): string {
  const cases = optionCases(commands, "    ");
  return `#compdef openrath
# zsh completion for openrath: put it on your $fpath as _openrath, or source it after compinit.
_openrath() {
  local cur="\${words[CURRENT]}" first="\${words[2]}" second="\${words[3]}" choices="" opts=""
  if (( CURRENT == 2 )); then
    compadd -- ${firstWords(commands).join(" ")}
    return
  fi
  if (( CURRENT == 3 )); then
    case "$first" in
${groupCases(commands, "    ").replaceAll(") words=", ") choices=")}
      help) choices="${commands.map((c) => c.name).join(" ")}" ;;
    esac
    if [[ -n "$choices" ]]; then compadd -- \${=choices}; return; fi
  fi
  case "$first $second" in
${cases.full}
  esac
  if [[ -z "$opts" ]]; then
    case "$first" in
${cases.single}
    esac
  fi
  if [[ "$cur" == -* ]]; then compadd -- \${=opts}; else _files; fi
}
if [[ "\${funcstack[1]}" == "_openrath" ]]; then _openrath "$@"; else compdef _openrath openrath; fi
`;
}

/** Quotes `text` for fish (single quotes; a quote or backslash escaped). */
const fishQuote = (text: string) => `'${text.replace(/[\\']/g, "\\$&")}'`;

/** A fish completion script: commands, subcommands, and each command's options with their descriptions. */
export function fishCompletion(commands: Tree): string {
  const top = commands.map((c) => c.name).join(" ");
  const lines = [
    "# fish completion for openrath: save it as ~/.config/fish/completions/openrath.fish.",
    `complete -c openrath -n "not __fish_seen_subcommand_from ${top} help" -f -a help -d ${fishQuote("Show help for a command.")}`,
    `complete -c openrath -n "__fish_seen_subcommand_from help" -f -a ${fishQuote(top)}`,
    `complete -c openrath -s h -l help -d ${fishQuote("Show help.")}`,
    `complete -c openrath -n "not __fish_seen_subcommand_from ${top}" -s v -l version -d ${fishQuote("Show the version.")}`,
  ];
  for (const entry of commands) {
    lines.push(
      `complete -c openrath -n "not __fish_seen_subcommand_from ${top} help" -f -a ${entry.name} -d ${fishQuote(entry.summary)}`,
    );
    if (!("commands" in entry)) continue;
    const words = entry.commands.map(sub).join(" ");
    for (const command of entry.commands) {
      lines.push(
        `complete -c openrath -n "__fish_seen_subcommand_from ${entry.name}; and not __fish_seen_subcommand_from ${words}" -f -a ${sub(command)} -d ${fishQuote(command.summary)}`,
      );
    }
  }
  for (const command of leaves(commands)) {
    const [first, second] = command.name.split(" ");
    const when = second
      ? `__fish_seen_subcommand_from ${first}; and __fish_seen_subcommand_from ${second}`
      : `__fish_seen_subcommand_from ${first}`;
    for (const option of command.options) {
      const short = option.short ? ` -s ${option.short}` : "";
      const value = option.value ? " -r" : "";
      const choices = option.choices ? ` -f -a ${fishQuote(option.choices.join(" "))}` : "";
      lines.push(
        `complete -c openrath -n "${when}" -l ${option.name}${short}${value}${choices} -d ${fishQuote(option.description)}`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}

const SCRIPTS: Record<Shell, (commands: Tree) => string> = {
  bash: bashCompletion,
  zsh: zshCompletion,
  fish: fishCompletion,
};

/** `openrath completion <shell>`: prints the shell completion script, made from the command tree. */
export function completionCommand(commands: () => Tree): Command {
  return {
    name: "completion",
    summary: "Print a shell completion script (bash, zsh or fish).",
    args: [{ name: "<shell>", description: SHELLS.join(", ") }],
    options: [],
    examples: [
      "openrath completion bash > ~/.local/share/bash-completion/completions/openrath",
      "openrath completion zsh > ~/.zfunc/_openrath   # with ~/.zfunc on $fpath",
      "openrath completion fish > ~/.config/fish/completions/openrath.fish",
    ],
    async run(ctx, { positionals }) {
      const shell = positionals[0] as Shell;
      if (!SHELLS.includes(shell)) {
        throw new UsageError(
          `openrath completion supports ${SHELLS.join(", ")}; got ${JSON.stringify(positionals[0])}`,
          { shell: positionals[0] },
        );
      }
      ctx.stdout.write(SCRIPTS[shell](commands()));
      return 0;
    },
  };
}
