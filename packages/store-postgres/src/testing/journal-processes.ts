import { type ChildProcess, spawn } from "node:child_process";
import { bundleWorker } from "./bundle-worker.js";

/** A line a journal worker printed: `at <runId> <what> <turn>`. */
export interface WorkerNote {
  readonly runId: string;
  readonly what: string;
  readonly turn: number;
}

/** A running journal worker. */
export interface JournalWorkerProcess {
  readonly child: ChildProcess;
  /** Resolves with the registered plan's hash once the worker claims. */
  readonly ready: Promise<string>;
  readonly exited: Promise<void>;
  /** Calls `listener` for every note the worker prints from now on. */
  onNote(listener: (note: WorkerNote) => void): void;
  /** Kills the process with SIGKILL and waits for it to be gone. */
  kill(): Promise<void>;
  stderr(): string;
}

/** Spawns a journal worker process (see `journal-worker.ts` for the modes). */
export async function spawnJournalWorker(args: {
  url: string;
  schema: string;
  workerId: string;
  leaseMs: number;
  mode: "agent" | "send-non_idempotent" | "send-idempotent";
  hang?: boolean;
}): Promise<JournalWorkerProcess> {
  const bundle = await bundleWorker("journal-worker");
  const child = spawn(
    process.execPath,
    [bundle, args.url, args.schema, args.workerId, String(args.leaseMs), args.mode, args.hang ? "1" : "0"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr!.on("data", (d) => {
    stderr += String(d);
  });
  const listeners: ((note: WorkerNote) => void)[] = [];
  let buffered = "";
  let resolveReady: (hash: string) => void = () => {};
  const ready = new Promise<string>((resolve, reject) => {
    resolveReady = resolve;
    child.once("exit", (code, signal) =>
      reject(new Error(`journal worker exited (${code ?? signal}) before ready: ${stderr.slice(-2000)}`)),
    );
  });
  ready.catch(() => {});
  child.stdout!.on("data", (d) => {
    buffered += String(d);
    let newline = buffered.indexOf("\n");
    while (newline >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      const hash = /^ready ([0-9a-f]{64})$/.exec(line);
      if (hash) resolveReady(hash[1]!);
      const note = /^at (\S+) (\S+) (\d+)$/.exec(line);
      if (note) for (const l of listeners) l({ runId: note[1]!, what: note[2]!, turn: Number(note[3]) });
      newline = buffered.indexOf("\n");
    }
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
  return {
    child,
    ready,
    exited,
    onNote: (listener) => listeners.push(listener),
    kill: async () => {
      child.kill("SIGKILL");
      await exited;
    },
    stderr: () => stderr.slice(-4096),
  };
}
