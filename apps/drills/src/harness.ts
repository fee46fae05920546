// The drills' harness: services of the drill's own on loopback (never the shared test services,
// which the drills stop and restart), `openrath` processes from source, a batch of runs through
// the HTTP client, and the checks that turn the end state into a report.
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { createClient, type OpenRathClient } from "@openrath/client";
import pg from "pg";

/** The repository root (this file lives in apps/drills/src). */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const CLI_DIR = join(ROOT, "packages", "cli");
const WORKFLOWS = join(ROOT, "apps", "drills", "src", "workflows.ts");
export const REPORTS = join(ROOT, "apps", "drills", "reports");

/** Statuses a run ends in, and those it is parked in for a human. */
const FINISHED = new Set(["succeeded", "failed", "cancelled", "timed_out"]);
const PARKED = new Set(["needs_review", "waiting"]);

/** A TCP port on 127.0.0.1 that nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Polls `check` every `everyMs` until it holds or `timeoutMs` passes; whether it held. */
export async function until(check: () => Promise<boolean> | boolean, timeoutMs: number, everyMs = 200) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (
      await Promise.resolve()
        .then(check)
        .catch(() => false)
    )
      return true;
    await sleep(everyMs);
  }
  return false;
}

const asPostgres = process.getuid?.() === 0 ? ["runuser", "-u", "postgres", "--"] : [];

function postgresBin(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, "bin", "postgres")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions[0] === undefined)
    throw new Error("no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)");
  return join(root, versions[0], "bin");
}

/** Runs a PostgreSQL tool as the `postgres` user when this process is root. */
function asPostgresUser(bin: string, tool: string, args: string[]) {
  const command = [...asPostgres, join(bin, tool), ...args];
  return spawnSync(command[0] ?? "", command.slice(1), { encoding: "utf8", timeout: 120_000 });
}

/** A PostgreSQL cluster of the drill's own, in a temp directory: stop it and start it again at will. */
export class Postgres {
  readonly bin = postgresBin();
  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  static async create(parent: string): Promise<Postgres> {
    const dir = join(parent, "postgres");
    mkdirSync(dir, { recursive: true });
    if (asPostgres.length > 0) execFileSync("chown", ["-R", "postgres:postgres", parent]);
    const pgsql = new Postgres(dir, await freePort());
    const init = asPostgresUser(pgsql.bin, "initdb", [
      "-D",
      pgsql.data,
      "-U",
      "postgres",
      "--auth=trust",
      "-E",
      "UTF8",
      "--no-sync",
    ]);
    if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
    pgsql.start();
    return pgsql;
  }

  get data() {
    return join(this.dir, "data");
  }
  url(database = "postgres") {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** Starts the server and waits until it accepts connections. */
  start() {
    const options = `-c listen_addresses=127.0.0.1 -p ${this.port} -k ${this.dir} -c max_connections=200 -c fsync=off`;
    const started = asPostgresUser(this.bin, "pg_ctl", [
      "start",
      "-D",
      this.data,
      "-w",
      "-l",
      join(this.dir, "server.log"),
      "-o",
      options,
    ]);
    if (started.status !== 0) throw new Error(`pg_ctl start failed: ${started.stderr || started.stdout}`);
  }

  /** Stops the server (`fast`: open connections are cut, as in an outage). */
  stop() {
    const stopped = asPostgresUser(this.bin, "pg_ctl", ["stop", "-D", this.data, "-m", "fast", "-w"]);
    if (stopped.status !== 0) throw new Error(`pg_ctl stop failed: ${stopped.stderr || stopped.stdout}`);
  }

  /** Runs `tool` (pg_dump, psql, …) against this server. */
  tool(tool: string, args: string[]) {
    return spawnSync(
      join(this.bin, tool),
      ["-h", "127.0.0.1", "-p", String(this.port), "-U", "postgres", ...args],
      {
        encoding: "utf8",
        timeout: 300_000,
        maxBuffer: 1 << 30,
      },
    );
  }

  async query<T extends pg.QueryResultRow>(sql: string, params: unknown[] = [], database = "postgres") {
    const client = new pg.Client({ connectionString: this.url(database) });
    await client.connect();
    try {
      return (await client.query<T>(sql, params)).rows;
    } finally {
      await client.end();
    }
  }
}

/** A Redis server of the drill's own (no persistence): shut it down and start it again on its port. */
export class Redis {
  private child: ChildProcess | undefined;
  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  static async create(parent: string): Promise<Redis> {
    const redis = new Redis(join(parent, "redis"), await freePort());
    mkdirSync(redis.dir, { recursive: true });
    await redis.start();
    return redis;
  }

  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start() {
    this.child = spawn(
      "redis-server",
      [
        "--bind",
        "127.0.0.1",
        "--port",
        String(this.port),
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        this.dir,
      ],
      { stdio: "ignore" },
    );
    const up = await until(() => this.ping(), 15_000, 100);
    if (!up) throw new Error(`redis-server did not answer on ${this.port}`);
  }

  /** Kills the server outright (SIGKILL): every client's connection drops at once. */
  async stop() {
    const child = this.child;
    if (!child) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
    this.child = undefined;
  }

  ping() {
    const reply = spawnSync("redis-cli", ["-p", String(this.port), "ping"], {
      encoding: "utf8",
      timeout: 5000,
    });
    return reply.stdout.trim() === "PONG";
  }
}

/** A long-running `openrath` process (serve or worker), started from source. */
export interface Proc {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  /** The API port, for `serve`. */
  readonly port: number;
  stderr(): string;
}

const SERVE_READY = /OpenRath server on http:\/\/127\.0\.0\.1:(\d+)/;
const WORKER_READY = /OpenRath worker: /;

/** What every `openrath` process of one drill shares. */
export interface Stage {
  readonly dir: string;
  readonly postgres: Postgres;
  readonly redis?: Redis;
  /** The database the processes use (`postgres`, or a restored copy's). */
  readonly database: string;
  /** The ledger file the `charge` tool appends to. */
  readonly ledger: string;
  readonly env: Record<string, string>;
  readonly procs: Set<Proc>;
}

/** Sets up a drill's stage: its own PostgreSQL (and Redis when asked), migrated, and the ledger. */
export async function stage(name: string, options: { redis?: boolean } = {}): Promise<Stage> {
  const dir = mkdtempSync(join(tmpdir(), `openrath-drill-${name}-`));
  const postgres = await Postgres.create(dir);
  const redis = options.redis ? await Redis.create(dir) : undefined;
  const ledger = join(dir, "ledger.jsonl");
  writeFileSync(ledger, "");
  const workspace = join(dir, "workspace");
  mkdirSync(workspace, { recursive: true });
  const env: Record<string, string> = {
    DATABASE_URL: postgres.url(),
    OPENRATH_DB_SCHEMA: "openrath",
    OPENRATH_WORKER_LEASE_MS: "1500",
    OPENRATH_LOG_LEVEL: "warn",
    OPENRATH_LOG_FORMAT: "json",
    DRILL_LEDGER: ledger,
    DRILL_WORKSPACE: workspace,
    ...(redis ? { REDIS_URL: redis.url } : {}),
  };
  const s: Stage = {
    dir,
    postgres,
    ...(redis ? { redis } : {}),
    database: "postgres",
    ledger,
    env,
    procs: new Set(),
  };
  const migrated = openrathSync(s, ["migrate"]);
  if (migrated.status !== 0) throw new Error(`openrath migrate failed: ${migrated.stderr}`);
  return s;
}

const BIN = ["--conditions=@openrath/source", "--import", "tsx", "src/bin.ts"];
const baseEnv = () => ({ PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" });

/** `openrath <args>` to its end. */
export function openrathSync(s: Stage, args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [...BIN, ...args], {
    cwd: CLI_DIR,
    encoding: "utf8",
    env: { ...baseEnv(), ...s.env, ...env },
    timeout: 300_000,
  });
}

/** Starts `openrath serve` or `openrath worker` on the stage's services and waits until it is ready. */
export async function start(
  s: Stage,
  role: "serve" | "worker",
  options: { args?: string[]; env?: Record<string, string>; cliDir?: string; workflows?: string } = {},
): Promise<Proc> {
  const args =
    role === "serve"
      ? ["serve", "--port", "0", "--auth", "local", "--no-worker", ...(options.args ?? [])]
      : ["worker", "--concurrency", "4", ...(options.args ?? [])];
  const child = spawn(
    process.execPath,
    [...BIN, ...args, "--state", join(s.dir, "state"), "--workflows", options.workflows ?? WORKFLOWS],
    {
      cwd: options.cliDir ?? CLI_DIR,
      env: { ...baseEnv(), ...s.env, ...options.env },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let stderr = "";
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const ready = role === "serve" ? SERVE_READY : WORKER_READY;
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    child.stderr?.on("data", (data: Buffer) => {
      stderr = (stderr + data.toString()).slice(-200_000);
      const found = ready.exec(stderr);
      if (found) resolve(found);
    });
    exited.then((code) =>
      reject(new Error(`openrath ${role} exited ${code} before it was ready:\n${stderr}`)),
    );
  });
  const proc: Proc = { child, exited, port: Number(match[1] ?? 0), stderr: () => stderr };
  s.procs.add(proc);
  exited.then(() => s.procs.delete(proc));
  return proc;
}

/** SIGKILLs a process and waits for it to be gone. */
export async function kill9(proc: Proc) {
  proc.child.kill("SIGKILL");
  await proc.exited;
}

/** Stops every process the stage started, then its services. */
export async function teardown(s: Stage) {
  for (const proc of [...s.procs]) proc.child.kill("SIGTERM");
  await Promise.race([Promise.all([...s.procs].map((p) => p.exited)), sleep(15_000)]);
  for (const proc of [...s.procs]) proc.child.kill("SIGKILL");
  await s.redis?.stop().catch(() => {});
  try {
    s.postgres.stop();
  } catch {
    // Already stopped by the drill.
  }
  rmSync(s.dir, { recursive: true, force: true });
}

export function client(port: number): OpenRathClient {
  return createClient({ baseUrl: `http://127.0.0.1:${port}` });
}

/** A submitted run, and which workflow it runs. */
export interface Submitted {
  readonly id: string;
  readonly workflow: "mams" | "ledger" | "bulky";
  readonly input: string;
}

let serial = 0;

/** Submits one run, alternating the MAMS example and the ledger workflow (one MAMS run in three). */
export async function submit(api: OpenRathClient, tag: string): Promise<Submitted> {
  const n = serial++;
  const workflow = n % 3 === 0 ? "mams" : "ledger";
  const input =
    workflow === "mams" ? `${tag}-${n}: the quick brown fox jumps over the lazy dog` : `${tag}-${n}`;
  const run = await api.runs.create({ assistant: workflow === "mams" ? "durable-mams" : "ledger", input });
  return { id: run.id, workflow, input };
}

/** Submits `count` runs, retrying each submission that fails (a fault may be on). */
export async function submitBatch(api: OpenRathClient, tag: string, count: number, retryMs = 60_000) {
  const runs: Submitted[] = [];
  for (let i = 0; i < count; i++) {
    const deadline = Date.now() + retryMs;
    for (;;) {
      try {
        runs.push(await submit(api, tag));
        break;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await sleep(250);
      }
    }
  }
  return runs;
}

/** The runs' statuses, read from the store (not the API, which a drill may have cut). */
export async function statuses(s: Stage, runs: readonly Submitted[]): Promise<Map<string, string>> {
  const rows = await s.postgres.query<{ id: string; status: string }>(
    "select id::text, status from openrath.runs where id = any($1::uuid[])",
    [runs.map((run) => run.id)],
    s.database,
  );
  return new Map(rows.map((row) => [row.id, row.status]));
}

/** Waits until every run is finished or parked; the time it took, in seconds, or `null` on timeout. */
export async function settle(
  s: Stage,
  runs: readonly Submitted[],
  timeoutMs: number,
): Promise<number | null> {
  const began = Date.now();
  const done = await until(
    async () => {
      const seen = await statuses(s, runs);
      return runs.every((run) => {
        const status = seen.get(run.id) ?? "";
        return FINISHED.has(status) || PARKED.has(status);
      });
    },
    timeoutMs,
    500,
  );
  return done ? (Date.now() - began) / 1000 : null;
}

/** The effects the `charge` tool made, one per line of its ledger. */
export function ledgerEntries(file: string): { ref: string; key: string | null }[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { ref: string; key: string | null });
}

/** What a drill found at its end. */
export interface Tally {
  submitted: number;
  succeeded: number;
  failed: number;
  parked: number;
  /** Ledger entries beyond the first for one effect (one idempotency key, or one ref). */
  duplicatedEffects: number;
  /** Runs neither finished nor parked, runs with a gap in their events, and succeeded runs missing an effect. */
  lostRecords: number;
  problems: string[];
}

/**
 * Checks the end state: every run finished or parked; each run's events numbered 1..n with no gap;
 * every ledger effect once; every succeeded ledger run with all its charges and its last message
 * (a run reported succeeded that did not do its work is a lost record).
 */
export async function tally(
  s: Stage,
  api: OpenRathClient,
  runs: readonly Submitted[],
  options: { ledgers?: readonly string[]; duplicates?: boolean } = {},
): Promise<Tally> {
  const charges = 4;
  const t: Tally = {
    submitted: runs.length,
    succeeded: 0,
    failed: 0,
    parked: 0,
    duplicatedEffects: 0,
    lostRecords: 0,
    problems: [],
  };
  const seen = await statuses(s, runs);
  const entries = (options.ledgers ?? [s.ledger]).flatMap(ledgerEntries);
  const byKey = new Map<string, number>();
  const byRef = new Map<string, number>();
  for (const entry of entries) {
    byRef.set(entry.ref, (byRef.get(entry.ref) ?? 0) + 1);
    if (entry.key) byKey.set(entry.key, (byKey.get(entry.key) ?? 0) + 1);
  }
  for (const [key, count] of options.duplicates === false ? [] : byKey) {
    if (count > 1) {
      t.duplicatedEffects += count - 1;
      t.problems.push(`effect ${key} happened ${count} times`);
    }
  }
  for (const [ref, count] of options.duplicates === false ? [] : byRef) {
    if (count > 1 && !t.problems.some((p) => p.includes(ref)))
      t.problems.push(`charge ${ref} ledgered ${count} times`);
  }
  const counters = await s.postgres.query<{ id: string; event_seq: number }>(
    "select id::text, event_seq::int from openrath.runs where id = any($1::uuid[])",
    [runs.map((run) => run.id)],
    s.database,
  );
  const lastOf = new Map(counters.map((row) => [row.id, row.event_seq]));
  for (const run of runs) {
    const status = seen.get(run.id) ?? "missing";
    if (status === "succeeded") t.succeeded++;
    else if (FINISHED.has(status)) t.failed++;
    else if (PARKED.has(status)) t.parked++;
    else {
      t.lostRecords++;
      t.problems.push(`run ${run.id} (${run.workflow}) ended ${status}`);
      continue;
    }
    // Every stored event, as the API serves it (checkpoint events live beside the others).
    const events: number[] = [];
    for await (const event of api.events.listAll(run.id)) events.push(event.sequence);
    if (events.some((sequence, i) => sequence !== i + 1) || events.length !== (lastOf.get(run.id) ?? 0)) {
      t.lostRecords++;
      t.problems.push(`run ${run.id}: its events have a gap (${events.join(",")})`);
    }
    if (status === "succeeded" && run.workflow === "ledger") {
      const missing = Array.from({ length: charges }, (_, i) => `${run.input}#${i + 1}`).filter(
        (ref) => !byRef.has(ref),
      );
      if (missing.length > 0) {
        t.lostRecords++;
        t.problems.push(`run ${run.id} succeeded without its charges ${missing.join(", ")}`);
      }
    }
  }
  return t;
}

/** A drill's report, as written to apps/drills/reports/<drill>-<timestamp>.json. */
export interface Report extends Tally {
  drill: string;
  quick: boolean;
  fault: string;
  start: string;
  end: string;
  recoverySeconds: number | null;
  /** Figures particular to the drill (kills made, readiness seen during an outage, RPO/RTO…). */
  details: Record<string, unknown>;
  ok: boolean;
}

/** Writes the report; its path. */
export function writeReport(report: Report): string {
  mkdirSync(REPORTS, { recursive: true });
  const file = join(REPORTS, `${report.drill}-${report.start.replace(/[:.]/g, "-")}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}
