import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A private PostgreSQL cluster a test can restart without disturbing the shared test server. */
export interface PgCluster {
  readonly url: string;
  restart(): void;
  stop(): void;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/**
 * Initializes and starts a cluster with the server binaries in `bin` (as the `postgres` user when
 * running as root, since the server refuses root), on 127.0.0.1 and a free port.
 */
export async function startPgCluster(bin: string): Promise<PgCluster> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "openrath-pg-private-"));
  const root = process.getuid?.() === 0;
  if (root) execFileSync("chown", ["postgres:postgres", dir]);
  const data = join(dir, "data");
  const as = (command: string, args: string[]) => {
    const result = root
      ? spawnSync("runuser", ["-u", "postgres", "--", join(bin, command), ...args], { encoding: "utf8" })
      : spawnSync(join(bin, command), args, { encoding: "utf8" });
    if (result.status !== 0)
      throw new Error(`${command} ${args.join(" ")} failed: ${result.stderr || result.stdout}`);
  };
  as("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "--no-sync"]);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200`;
  as("pg_ctl", ["-D", data, "-o", options, "-l", join(dir, "server.log"), "-w", "start"]);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    restart: () =>
      as("pg_ctl", ["-D", data, "-o", options, "-l", join(dir, "server.log"), "-m", "fast", "-w", "restart"]),
    stop: () => {
      try {
        as("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
