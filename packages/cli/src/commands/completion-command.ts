import { UsageError } from "../internal/args.js";
import type { Command, CommandGroup } from "../internal/command.js";

/** A bash completion script for `commands`: command words, then each command's options. */
export function bashCompletion(commands: readonly (Command | CommandGroup)[]): string {
  const leaves = commands.flatMap((c) => ("commands" in c ? c.commands : [c]));
  const cases = leaves
    .map((command) => {
      const options = command.options.map((option) => `--${option.name}`).concat("--help");
      return `    "${command.name}") opts="${options.join(" ")}" ;;`;
    })
    .join("\n");
  const subcommands = commands
    .filter((c): c is CommandGroup => "commands" in c)
    .map(
      (group) =>
        `    "${group.name}") words="${group.commands.map((c) => c.name.split(" ")[1]).join(" ")}" ;;`,
    )
    .join("\n");
  return `# bash completion for openrath: source it, or put it in your bash-completion directory.
_openrath() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" words="" opts=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${commands.map((c) => c.name).join(" ")} --help --version" -- "$cur"))
    return
  fi
  local first="\${COMP_WORDS[1]}" second="\${COMP_WORDS[2]}"
  if [ "$COMP_CWORD" -eq 2 ]; then
    case "$first" in
${subcommands}
    esac
    if [ -n "$words" ]; then COMPREPLY=($(compgen -W "$words" -- "$cur")); return; fi
  fi
  case "$first $second" in
${cases}
  esac
  if [ -z "$opts" ]; then
    case "$first" in
${cases}
    esac
  fi
  COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -o default -F _openrath openrath
`;
}

/** `openrath completion bash`: prints the shell completion script. */
export function completionCommand(commands: () => readonly (Command | CommandGroup)[]): Command {
  return {
    name: "completion",
    summary: "Print a shell completion script (bash).",
    args: [{ name: "<shell>", description: "bash" }],
    options: [],
    examples: ["openrath completion bash > ~/.local/share/bash-completion/completions/openrath"],
    async run(ctx, { positionals }) {
      if (positionals[0] !== "bash") throw new UsageError("openrath completion supports bash");
      ctx.stdout.write(bashCompletion(commands()));
      return 0;
    },
  };
}
