/**
 * The programs a command runs, as far as reading it can tell: for a tool policy's command lists.
 * A shell line is split into commands at `;`, `&&`, `||`, `|`, `&`, newlines, subshells and
 * groups; each command's program is its first word after variable assignments, with quotes and
 * backslashes removed (`\rm`, `'rm'` and `r""m` are all `rm`) and the directory dropped
 * (`/bin/rm` is `rm`). Wrappers that run another program are looked through, and both count:
 * `env`, `sudo`, `nice`, `timeout`, `xargs`, `sh -c '...'`, `find -exec`, and the like.
 * `undefined` means the command runs something reading cannot see: a substitution (`$(…)`,
 * backticks, `<(…)`), a variable or glob in program position, `eval`, `source`.
 */

/** Shells whose `-c` argument is another command line, and whose code `run_code` passes as a line. */
export const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "busybox", "shell"]);

/** Wrappers whose remaining words (after their own options) are a program and its arguments. */
const WRAPPERS = new Set([
  "env",
  "sudo",
  "doas",
  "nice",
  "nohup",
  "timeout",
  "time",
  "stdbuf",
  "setsid",
  "ionice",
  "chrt",
  "taskset",
  "command",
  "exec",
  "builtin",
  "xargs",
  "strace",
  "unbuffer",
  "chroot",
  "flock",
  "watch",
  "parallel",
  "runuser",
  "su",
  "script",
]);

/** Commands that run code from their arguments (or define names for it) in a way reading cannot follow. */
const OPAQUE = new Set(["eval", "source", ".", "alias", "trap"]);

/** Shell keywords that may start a command before its program (`if rm x; then …`). */
const KEYWORDS = new Set(["if", "then", "else", "elif", "do", "while", "until", "!", "time", "coproc"]);

/** Commands that run no program themselves: loop headers, block ends, `case` heads. */
const NO_PROGRAM = new Set(["fi", "done", "esac", "for", "select", "case", "in", ";;", "function"]);

/** Options of a wrapper that take a value (so the next word is not the program). */
const VALUE_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  env: ["-u", "--unset", "-C", "--chdir"],
  exec: ["-a"],
  sudo: [
    "-u",
    "--user",
    "-g",
    "--group",
    "-C",
    "-D",
    "--chdir",
    "-h",
    "--host",
    "-p",
    "--prompt",
    "-r",
    "-t",
  ],
  nice: ["-n", "--adjustment"],
  timeout: ["-s", "--signal", "-k", "--kill-after"],
  stdbuf: ["-i", "-o", "-e", "--input", "--output", "--error"],
  ionice: ["-c", "--class", "-n", "--classdata", "-p", "-P", "-u"],
  xargs: [
    "-a",
    "-d",
    "-E",
    "-e",
    "-I",
    "-i",
    "-L",
    "-l",
    "-n",
    "-P",
    "-s",
    "--arg-file",
    "--delimiter",
    "--max-args",
    "--max-procs",
    "--max-chars",
    "--replace",
  ],
  flock: ["-w", "--timeout", "-E", "--conflict-exit-code"],
  watch: ["-n", "--interval", "-d"],
  strace: ["-e", "-o", "-p", "-s", "-u"],
  chrt: [],
  taskset: [],
  runuser: ["-u", "-g", "-G", "--user", "--group"],
  su: ["-c", "--command", "-s", "--shell", "-g", "-G"],
};

/** Words of one shell line split into commands; `undefined` when it holds a substitution. */
function commandsOf(line: string): string[][] | undefined {
  const commands: string[][] = [];
  let words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | undefined;
  const endWord = () => {
    if (inWord) words.push(word);
    word = "";
    inWord = false;
  };
  const endCommand = () => {
    endWord();
    if (words.length > 0) commands.push(words);
    words = [];
  };
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quote === "'") {
      if (ch === "'") quote = undefined;
      else word += ch;
      continue;
    }
    if (ch === "`" || (ch === "$" && line[i + 1] === "(")) return undefined;
    if (quote === '"') {
      if (ch === '"') quote = undefined;
      else if (ch === "\\" && i + 1 < line.length) word += line[++i];
      else word += ch;
      continue;
    }
    if ((ch === "<" || ch === ">") && line[i + 1] === "(") return undefined;
    if (ch === "'" || ch === '"') {
      quote = ch;
      inWord = true;
    } else if (ch === "\\") {
      if (line[i + 1] === "\n") i++;
      else if (i + 1 < line.length) {
        word += line[++i];
        inWord = true;
      }
    } else if (ch === "#" && !inWord) {
      while (i + 1 < line.length && line[i + 1] !== "\n") i++;
    } else if (/[;&|\n(){}]/.test(ch)) {
      endCommand();
    } else if (/\s/.test(ch)) {
      endWord();
    } else {
      word += ch;
      inWord = true;
    }
  }
  endCommand();
  return commands;
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;
const base = (word: string) => word.split("/").pop() ?? word;

/** The programs one command's words run, wrappers included; `undefined` when some cannot be seen. */
function programsOfWords(words: readonly string[], depth: number): string[] | undefined {
  const out: string[] = [];
  let i = 0;
  while (i < words.length && (ASSIGNMENT.test(words[i]!) || KEYWORDS.has(words[i]!))) i++;
  if (i < words.length && NO_PROGRAM.has(words[i]!)) return out;
  while (i < words.length) {
    const word = words[i]!;
    // A redirection, or a variable or glob where the program goes, hides what runs.
    if (/^[0-9]*[<>]/.test(word)) return out;
    if (word !== "[" && word !== "[[" && /[$*?[\]]/.test(word)) return undefined;
    const program = base(word);
    out.push(program);
    if (OPAQUE.has(program)) return undefined;
    if (SHELLS.has(program)) {
      // `sh -c LINE` (also in clusters such as `-lc`) runs LINE; `sh FILE` or a bare `sh` reads
      // a script or stdin that cannot be seen from here.
      let line = false;
      for (let k = i + 1; k < words.length; k++) {
        const w = words[k]!;
        if (w === "--") continue;
        if (w === "-o" || w === "+o") {
          k++;
          continue;
        }
        if (/^[-+][A-Za-z]+$/.test(w)) {
          if (w.includes("c")) line = true;
          continue;
        }
        if (!line || depth > 8) return undefined;
        const inner = programsOfLine(w, depth + 1);
        return inner === undefined ? undefined : [...out, ...inner];
      }
      return undefined;
    }
    if (program === "find") {
      for (let k = i + 1; k < words.length; k++) {
        if (["-exec", "-execdir", "-ok", "-okdir"].includes(words[k]!) && k + 1 < words.length) {
          const inner = programsOfWords(words.slice(k + 1), depth + 1);
          if (inner === undefined) return undefined;
          out.push(...inner);
        }
      }
      return out;
    }
    if (!WRAPPERS.has(program)) return out;
    // Skip the wrapper's options (and their values) and, for env, its assignments.
    const takesValue = VALUE_OPTIONS[program] ?? [];
    i++;
    while (i < words.length) {
      const w = words[i]!;
      if (w === "--") {
        i++;
        break;
      }
      if (program === "env" && ASSIGNMENT.test(w)) i++;
      else if (
        program === "env" &&
        (w === "-S" || w === "--split-string" || w.startsWith("--split-string="))
      ) {
        // `env -S "rm -rf x"` runs its value split into words: read it as a line.
        const value = w.startsWith("--split-string=") ? w.slice("--split-string=".length) : words[i + 1];
        if (value === undefined || depth > 8) return undefined;
        const inner = programsOfLine(value, depth + 1);
        return inner === undefined ? undefined : [...out, ...inner];
      } else if (w.startsWith("-") && w.length > 1) {
        i += takesValue.includes(w) ? 2 : 1;
      } else if (
        (program === "timeout" || program === "nice" || program === "chrt" || program === "taskset") &&
        /^[0-9.]+[smhd]?$|^0x[0-9a-f]+$/i.test(w)
      ) {
        i++;
      } else break;
    }
  }
  return out;
}

/** The programs a shell line runs; `undefined` when it runs something reading cannot see. */
export function programsOfLine(line: string, depth = 0): string[] | undefined {
  const commands = commandsOf(line);
  if (commands === undefined) return undefined;
  const out: string[] = [];
  for (const words of commands) {
    const programs = programsOfWords(words, depth);
    if (programs === undefined) return undefined;
    out.push(...programs);
  }
  return out;
}

/** The programs an argv array runs (no shell: only its program and what wrappers in it run). */
export function programsOfArgv(argv: readonly unknown[]): string[] | undefined {
  if (argv.length === 0) return [];
  const words = argv.map(String);
  // No shell reads an argv: quotes and `$` in it are plain characters, except in a wrapped `sh -c` line.
  const program = base(words[0]!);
  if (SHELLS.has(program) || WRAPPERS.has(program) || program === "find" || OPAQUE.has(program)) {
    return programsOfWords(words, 0);
  }
  return [program];
}
