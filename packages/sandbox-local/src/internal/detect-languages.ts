import { findExecutable } from "./find-executable.js";

/** How `runCode` runs one language: the interpreter and the script file's extension. */
export interface Interpreter {
  readonly command: string;
  /** Arguments before the script path. */
  readonly args: readonly string[];
  readonly extension: string;
}

/**
 * The `runCode` languages this host can run, in manifest order: `python` (python3 on `PATH`,
 * unbuffered so output streams), `javascript` (the Node.js running this process), `bash` and `sh`
 * (when found). Only looks at the file system, so it is cheap enough for a factory. Under
 * bubblewrap it is called with the sandbox's `PATH`, so only interpreters visible inside count.
 */
export function detectLanguages(searchPath: string, node = process.execPath): Record<string, Interpreter> {
  const found: Record<string, Interpreter> = {};
  const python = findExecutable("python3", searchPath);
  if (python) found.python = { command: python, args: ["-u"], extension: ".py" };
  found.javascript = { command: node, args: [], extension: ".js" };
  const bash = findExecutable("bash", searchPath);
  if (bash) found.bash = { command: bash, args: [], extension: ".sh" };
  const sh = findExecutable("/bin/sh", searchPath) ?? findExecutable("sh", searchPath);
  if (sh) found.sh = { command: sh, args: [], extension: ".sh" };
  return found;
}
