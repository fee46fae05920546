import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

let bundled: Promise<string> | undefined;

/**
 * The fault worker bundled once into one plain JavaScript file (workspace packages inlined from
 * source, npm packages external), so each of the hundreds of restarts costs a Node start, not a
 * TypeScript compile.
 */
export function faultWorkerBundle(): Promise<string> {
  bundled ??= (async () => {
    const { build } = await import("esbuild");
    const here = fileURLToPath(new URL(".", import.meta.url));
    // Inside the package's node_modules, so the bundle's bare imports (pg, kysely) resolve from there.
    const out = join(
      here,
      "..",
      "..",
      "node_modules",
      ".openrath-fault-worker",
      `fault-worker-${process.pid}.mjs`,
    );
    await build({
      entryPoints: [join(here, "fault-worker.ts")],
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      outfile: out,
      conditions: ["@openrath/source"],
      external: ["pg", "@electric-sql/pglite", "kysely", "esbuild"],
      logLevel: "silent",
    });
    return out;
  })();
  return bundled;
}

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
  const bundle = await faultWorkerBundle();
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
