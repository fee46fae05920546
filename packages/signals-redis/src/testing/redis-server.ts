import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ServiceCheck, serviceAvailable } from "@openrath/testing";
import pg from "pg";

/**
 * Whether a Redis server answers `PING` on 127.0.0.1:`port` (with `anyReply`, an error reply such
 * as `NOAUTH` counts: the server is up but wants a password).
 */
export function redisAnswers(port: number, anyReply = false): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    let reply = "";
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once("error", () => done(false));
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.on("data", (data) => {
      reply += data.toString("latin1");
      if (reply.includes("\r\n")) done(reply.startsWith("+PONG") || (anyReply && reply.startsWith("-")));
    });
  });
}

/** A TCP port on 127.0.0.1 that nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A redis-server child process this test owns, on a fixed port, that can be killed and started again. */
export interface RedisProcess {
  readonly url: string;
  readonly port: number;
  /** Whether the server is running now. */
  readonly running: boolean;
  /** SIGKILLs the server, as a crash would; resolves once it has exited. */
  kill(): Promise<void>;
  /** Starts the server again on the same port (empty: Redis keeps nothing). */
  restart(): Promise<void>;
  /** Stops the server and removes its directory. */
  stop(): Promise<void>;
}

/** Whether `redis-server` is installed here. */
export function haveRedisServer(): boolean {
  return spawnSync("sh", ["-c", "command -v redis-server"], { stdio: "ignore" }).status === 0;
}

/**
 * Starts `redis-server` on 127.0.0.1 (a free port unless given) with persistence off, in a
 * temporary directory, and waits until it answers. `args` go to redis-server as well (e.g.
 * `["--requirepass", "…"]`; a server that asks for a password still answers `PING` with an error).
 */
export async function startRedis(
  options: { port?: number; args?: readonly string[] } = {},
): Promise<RedisProcess> {
  const port = options.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), "openrath-redis-test-"));
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const launch = async () => {
    const proc = spawn(
      "redis-server",
      [
        "--bind",
        "127.0.0.1",
        "--port",
        String(port),
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        dir,
        ...(options.args ?? []),
      ],
      { stdio: "ignore" },
    );
    child = proc;
    exited = new Promise((resolve) => proc.once("exit", () => resolve()));
    let failed = "";
    proc.once("error", (error) => (failed = error.message));
    const deadline = Date.now() + 20_000;
    while (!(await redisAnswers(port, options.args?.includes("--requirepass") ?? false))) {
      if (failed || proc.exitCode !== null)
        throw new Error(`redis-server did not start: ${failed || proc.exitCode}`);
      if (Date.now() > deadline) throw new Error("redis-server did not answer within 20 s");
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  await launch();
  const alive = () => child !== undefined && child.exitCode === null && child.signalCode === null;
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    get running() {
      return alive();
    },
    async kill() {
      if (alive()) child!.kill("SIGKILL");
      await exited;
    },
    async restart() {
      if (alive()) return;
      await launch();
    },
    async stop() {
      if (alive()) child!.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The Redis for this test file: the one the test services started (`OPENRATH_TEST_REDIS_URL`), else
 * a redis-server child process started for this file. `available` is false (or, under
 * `OPENRATH_REQUIRE_SERVICES`, the call throws) when neither can be had.
 */
export async function redisTestService(): Promise<
  ServiceCheck & { readonly url?: string; readonly stop: () => Promise<void> }
> {
  let url: string | undefined;
  let stop = async () => {};
  const check = await serviceAvailable("redis", async () => {
    const given = process.env.OPENRATH_TEST_REDIS_URL;
    if (given) {
      const port = Number(new URL(given).port || 6379);
      if (!(await redisAnswers(port))) throw new Error(`nothing answers PING at ${given}`);
      url = given;
      return true;
    }
    if (!haveRedisServer())
      throw new Error(
        "OPENRATH_TEST_REDIS_URL is not set and redis-server is not installed (see tooling/scripts/services.mjs)",
      );
    const server = await startRedis();
    url = server.url;
    stop = () => server.stop();
    return true;
  });
  return { ...check, ...(check.available ? { url } : {}), stop };
}

/** The PostgreSQL test server's URL (from the test services), or undefined. */
export const POSTGRES_URL = process.env.OPENRATH_TEST_POSTGRES_URL;

/** Whether the PostgreSQL test server answers; under `OPENRATH_REQUIRE_SERVICES` a missing one fails. */
export async function postgresTestService(): Promise<ServiceCheck> {
  return serviceAvailable("postgres", async () => {
    if (!POSTGRES_URL)
      throw new Error(
        "OPENRATH_TEST_POSTGRES_URL is not set (tooling/scripts/services.mjs starts the server)",
      );
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    await client.end();
    return true;
  });
}
