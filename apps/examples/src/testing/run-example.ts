import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The examples app's directory: scripts run from there, as `pnpm --filter @openrath/examples` runs them. */
const cwd = fileURLToPath(new URL("../..", import.meta.url));

/** A running example script, its collected output (stdout and stderr) and its exit. */
export interface RunningExample {
  readonly child: ChildProcess;
  output(): string;
  readonly exited: Promise<number | null>;
  /** Resolves once the output holds `text`; rejects if the script ends first. */
  until(text: string): Promise<void>;
}

/**
 * Starts an example the way a user runs it (`node --import tsx <script> ...args`), with stdin
 * piped so a test can answer prompts. Killed with SIGKILL after `timeoutMs` (default 180 s) so a
 * script that never exits fails its test instead of hanging it.
 */
export function startExample(
  script: string,
  args: readonly string[] = [],
  options: { readonly env?: NodeJS.ProcessEnv; readonly timeoutMs?: number } = {},
): RunningExample {
  const child = spawn(
    process.execPath,
    ["--conditions=@openrath/source", "--import", "tsx", script, ...args],
    {
      cwd,
      stdio: ["pipe", "pipe", "pipe"],
      ...(options.env ? { env: options.env } : {}),
    },
  );
  let out = "";
  const collect = (d: Buffer) => {
    out += String(d);
  };
  child.stdout!.on("data", collect);
  child.stderr!.on("data", collect);
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 180_000);
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve(code);
    }),
  );
  return {
    child,
    output: () => out,
    exited,
    until: async (text) => {
      while (!out.includes(text)) {
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`the example ended before "${text}":\n${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}
