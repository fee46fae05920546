import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type CliIO, main } from "../main.js";

/** What a finished command printed, and its exit code. */
export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The cli package's directory: where `src/bin.ts` runs from. */
export const packageDir = fileURLToPath(new URL("../..", import.meta.url));

/** Runs `openrath <argv>` in this process with captured output (`main`, no child process). */
export async function runMain(
  argv: string[],
  io: Partial<CliIO> = {},
): Promise<CliResult & { code: number }> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    env: { PATH: process.env.PATH },
    ...io,
  });
  return { code, stdout, stderr };
}

const BIN = ["--conditions=@openrath/source", "--import", "tsx", "src/bin.ts"];
const baseEnv = () => ({ PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" });

/** Runs the real `openrath` entry point from source, as `node --import tsx src/bin.ts`, to its end. */
export function spawnSyncOpenrath(args: string[], env: Record<string, string> = {}): CliResult {
  const result = spawnSync(process.execPath, [...BIN, ...args], {
    cwd: packageDir,
    encoding: "utf8",
    env: { ...baseEnv(), ...env },
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The same, without blocking the test's event loop (for a server the test talks to meanwhile). */
export function spawnOpenrath(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const child = spawn(process.execPath, [...BIN, ...args], {
    cwd: packageDir,
    env: { ...baseEnv(), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (data: Buffer) => (stdout += data.toString()));
  child.stderr?.on("data", (data: Buffer) => (stderr += data.toString()));
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, stdout, stderr })));
}

/** A long-running `openrath <args>` (serve, worker), ready once its standard error matches `ready`. */
export interface RunningOpenrath {
  readonly child: ChildProcess;
  readonly matched: Promise<RegExpExecArray>;
  readonly exited: Promise<number | null>;
  stderr(): string;
}

/** Starts `openrath <args>` from source; the caller kills it (SIGTERM to stop it, SIGKILL in cleanup). */
export function startOpenrath(
  args: string[],
  ready: RegExp,
  env: Record<string, string> = {},
): RunningOpenrath {
  const child = spawn(process.execPath, [...BIN, ...args], {
    cwd: packageDir,
    env: { ...baseEnv(), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const matched = new Promise<RegExpExecArray>((resolve, reject) => {
    child.stderr?.on("data", (data: Buffer) => {
      stderr += data.toString();
      const match = ready.exec(stderr);
      if (match) resolve(match);
    });
    exited.then((code) => reject(new Error(`exited ${code} before it was ready:\n${stderr}`)));
  });
  return { child, matched, exited, stderr: () => stderr };
}
