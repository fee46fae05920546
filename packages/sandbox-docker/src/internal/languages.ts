/** How `runCode` runs one language: the interpreter, and the flag that takes code as an argument. */
export interface LanguageRunner {
  /** Program that must exist in the image (checked at open with `command -v`). */
  readonly program: string;
  /** argv prefix for code passed inline; the code is appended as the last argument. */
  readonly inline: readonly string[];
  /** argv prefix for code in a file; the file's path is appended. */
  readonly file: readonly string[];
  /** File name extension for code written to a file. */
  readonly extension: string;
}

/** Languages `runCode` knows, by the name callers pass. */
export const LANGUAGES: Readonly<Record<string, LanguageRunner>> = {
  sh: { program: "sh", inline: ["/bin/sh", "-c"], file: ["/bin/sh"], extension: "sh" },
  bash: { program: "bash", inline: ["bash", "-c"], file: ["bash"], extension: "sh" },
  python: { program: "python3", inline: ["python3", "-c"], file: ["python3"], extension: "py" },
  javascript: { program: "node", inline: ["node", "-e"], file: ["node"], extension: "js" },
  ruby: { program: "ruby", inline: ["ruby", "-e"], file: ["ruby"], extension: "rb" },
  perl: { program: "perl", inline: ["perl", "-e"], file: ["perl"], extension: "pl" },
};
