import { type ChildProcess, spawn } from "node:child_process";
import { bundleWorker } from "./bundle-worker.js";

/** A running worker process. */
export interface WorkerProcess {
  readonly id: string;
  readonly child: ChildProcess;
  /** Resolves once it printed `ready`, with the hash of the plan it registered. */
  readonly ready: Promise<string>;
  readonly exited: Promise<void>;
  /** What it wrote to stderr so far (the last 4 KB). */
  stderr(): string;
}

/** Spawns a fault worker process. */
export async function spawnWorker(args: {
  url: string;
  schema: string;
  workerId: string;
  stepMs: number;
  leaseMs: number;
  concurrency: number;
  /** Steps of the fault workflow (default 3), whether they emit (default true), commit hold. */
  steps?: number;
  emit?: boolean;
  holdMs?: number;
  /** How long a SIGTERM lets the steps in flight finish before they are aborted (default 0). */
  drainMs?: number;
}): Promise<WorkerProcess> {
  const bundle = await bundleWorker("fault-worker");
  const child = spawn(
    process.execPath,
    [
      bundle,
      args.url,
      args.schema,
      args.workerId,
      String(args.stepMs),
      String(args.leaseMs),
      String(args.concurrency),
      String(args.steps ?? 3),
      args.emit === false ? "0" : "1",
      String(args.holdMs ?? 0),
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, OPENRATH_DRAIN_MS: String(args.drainMs ?? 0) },
    },
  );
  let stderr = "";
  child.stderr!.on("data", (d) => {
    stderr += String(d);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const ready = new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (d) => {
      const match = /ready ([0-9a-f]{64})/.exec(String(d));
      if (match) resolve(match[1]!);
    });
    child.once("exit", (code, signal) =>
      reject(
        new Error(`worker ${args.workerId} exited (${code ?? signal}) before ready: ${stderr.slice(-2000)}`),
      ),
    );
  });
  ready.catch(() => {});
  return { id: args.workerId, child, ready, exited, stderr: () => stderr.slice(-4096) };
}
