import { type ChildProcess, spawn } from "node:child_process";
import { bundleWorker } from "./bundle-worker.js";
import { TOOL_TURNS } from "./fake-openai-server.js";

/** Where a kill can land in a turn, in the order the loop passes them (see `journal-kill-worker.ts`). */
export const TOOL_TURN_POINTS = ["model", "reply", "search", "between", "note"] as const;

/** Every kill point of the agent, in order: each point of each tool turn, then the answer's request and reply. */
export function killPoints(): string[] {
  const points: string[] = [];
  for (let turn = 1; turn <= TOOL_TURNS; turn++)
    for (const p of TOOL_TURN_POINTS) points.push(`${turn}:${p}`);
  points.push(`${TOOL_TURNS + 1}:model`, `${TOOL_TURNS + 1}:reply`);
  return points;
}

/** How a kill worker ended. */
export interface KillWorkerExit {
  /** The point it killed itself at (it printed `kill <point>`), if any. */
  readonly killedAt?: string;
  /** The signal that ended it (`SIGKILL` after a kill point). */
  readonly signal: NodeJS.Signals | null;
  readonly code: number | null;
  /** The run it worked on, from its `run <id>` line. */
  readonly runId?: string;
  /** The run's end as it printed it (`done <id> <status>`). */
  readonly status?: string;
  /** The run it printed as done. */
  readonly doneRunId?: string;
  readonly stderr: string;
}

/** Runs one kill worker to its end (a kill point, or the run's end). */
export async function runKillWorker(args: {
  driver: "postgres" | "pglite";
  /** A connection string, or a PGlite data directory. */
  target: string;
  schema: string;
  workerId: string;
  leaseMs: number;
  /** The fake OpenAI server's URL with the scenario (`http://127.0.0.1:<port>/<scenario>`). */
  service: string;
  /** The idempotency key the run is submitted under: the same run for every process of a scenario. */
  key: string;
  killAt?: string;
}): Promise<KillWorkerExit> {
  const bundle = await bundleWorker("journal-kill-worker");
  const child: ChildProcess = spawn(
    process.execPath,
    [
      bundle,
      args.driver,
      args.target,
      args.schema,
      args.workerId,
      String(args.leaseMs),
      args.service,
      args.key,
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, OPENRATH_TEST_KILL_AT: args.killAt ?? "" },
    },
  );
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d) => {
    stdout += String(d);
  });
  child.stderr!.on("data", (d) => {
    stderr += String(d);
  });
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once("close", (c, s) => resolve([c, s])),
  );
  const line = (prefix: string) =>
    stdout
      .split("\n")
      .find((l) => l.startsWith(`${prefix} `))
      ?.slice(prefix.length + 1);
  const done = line("done")?.split(" ");
  return {
    ...(line("kill") ? { killedAt: line("kill")! } : {}),
    signal,
    code,
    ...(line("run") ? { runId: line("run")! } : {}),
    ...(done ? { doneRunId: done[0]!, status: done[1]! } : {}),
    stderr: stderr.slice(-4096),
  };
}
