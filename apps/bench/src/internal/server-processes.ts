// The processes `bench:server` measures: `openrath serve` and `openrath worker` run from source (as
// a user runs them, on DATABASE_URL), a bare Fastify server, and a fresh database for each case.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
const cliBin = join(dirname(require.resolve("@openrath/cli/package.json")), "src", "bin.ts");
/** The bench's workflows, as `--workflows` takes them. */
export const flowsFile = join(here, "server-flows.ts");

/** A new, empty database on the server at `url`; `drop()` removes it (and ends its connections). */
export async function freshDatabase(url: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `bench_srv_${randomBytes(4).toString("hex")}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name}`);
  const at = new URL(url);
  at.pathname = `/${name}`;
  return { url: at.toString(), drop: () => admin(`drop database if exists ${name} with (force)`) };
}

/**
 * CPU time (user + system, ms) a process has used so far, from `/proc/<pid>/stat`; `undefined`
 * where there is no `/proc` (not Linux) or the process has gone.
 */
export function cpuMsOf(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The fields after the command name (in parentheses, which may hold spaces): utime is the 14th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}
/** `getconf CLK_TCK`: 100 on every Linux this runs on. */
const CLOCK_TICKS = 100;

export interface Child {
  readonly child: ChildProcess;
  /** The `http://127.0.0.1:<port>` it listens on (servers only). */
  readonly url: string;
  /** SIGTERM, then SIGKILL after 10 s; resolves when it has exited. */
  stop(): Promise<void>;
}

/** Spawns `args` and resolves once its stderr (or stdout) matches `ready`. */
function started(args: string[], env: NodeJS.ProcessEnv, ready: RegExp): Promise<Child> {
  const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    const seen = (data: Buffer) => {
      // Keep only the tail: enough to show why a process failed to start.
      output = (output + data.toString()).slice(-4000);
      const match = ready.exec(output);
      if (match) {
        ready = /$^/;
        resolve({ child, url: match[1] ?? "", stop });
      }
    };
    child.stdout!.on("data", seen);
    child.stderr!.on("data", seen);
    child.once("exit", (code) =>
      reject(new Error(`${args.slice(-6).join(" ")} exited (${code}):\n${output}`)),
    );
  });
}

/** `OPENRATH_BENCH_PROFILE_DIR`: `serve` writes a CPU profile there when it exits. */
const profileArgs = () => {
  const dir = process.env.OPENRATH_BENCH_PROFILE_DIR;
  return dir ? ["--cpu-prof", `--cpu-prof-dir=${dir}`] : [];
};

const cliArgs = (command: string[], nodeArgs: string[] = []) => [
  ...nodeArgs,
  "--conditions=@openrath/source",
  "--import",
  "tsx",
  cliBin,
  ...command,
];

/** The environment of a CLI process: PostgreSQL by DATABASE_URL, and a rate limit that never bites. */
function cliEnv(databaseUrl: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "",
    DATABASE_URL: databaseUrl,
    OPENRATH_RATE_LIMIT: "100000000",
  };
}

/** `openrath serve` on `databaseUrl` (port 0), with `--auth tokens` unless `local` is asked for. */
export function serve(
  databaseUrl: string,
  options: { worker: boolean; concurrency?: number; auth: "tokens" | "local" },
): Promise<Child> {
  const args = ["serve", "--port", "0", "--workflows", flowsFile, "--auth", options.auth];
  if (options.worker) args.push("--concurrency", String(options.concurrency ?? 16));
  else args.push("--no-worker");
  return started(
    cliArgs(args, profileArgs()),
    cliEnv(databaseUrl),
    /OpenRath server on (http:\/\/127\.0\.0\.1:\d+)/,
  );
}

/** `openrath worker` on `databaseUrl`. */
export function worker(databaseUrl: string, concurrency: number): Promise<Child> {
  return started(
    cliArgs(["worker", "--workflows", flowsFile, "--concurrency", String(concurrency)]),
    cliEnv(databaseUrl),
    /OpenRath worker:()/,
  );
}

/** The bare Fastify server of `bare-server.ts` on `databaseUrl`. */
export function bareServer(databaseUrl: string): Promise<Child> {
  return started(
    ["--conditions=@openrath/source", "--import", "tsx", join(here, "bare-server.ts"), databaseUrl],
    { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" },
    /listening on (http:\/\/127\.0\.0\.1:\d+)/,
  );
}
