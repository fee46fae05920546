import { spawn } from "node:child_process";
import type Dockerode from "dockerode";
import { onExit as onProcessExit } from "signal-exit";
import type { DockerEndpoint } from "./docker-client.js";

interface Live {
  readonly docker: Dockerode;
  readonly endpoint: DockerEndpoint;
}

/** Containers this process created and has not removed yet, by id. */
const live = new Map<string, Live>();
let installed = false;

/**
 * Remembers a container so it is removed if the process exits without closing it — normally,
 * through `process.exit`, or by SIGINT, SIGTERM, SIGHUP and the other signals `signal-exit`
 * covers (it re-raises the signal afterwards). The hook is installed on first use only, so
 * importing the package changes nothing. A process killed by SIGKILL runs no hook: its containers
 * are left to `removeOrphanedSandboxes()`.
 */
export function trackContainer(id: string, docker: Dockerode, endpoint: DockerEndpoint): void {
  live.set(id, { docker, endpoint });
  if (installed) return;
  installed = true;
  onProcessExit(() => onExit());
}

/** Forgets a container that was removed. */
export function untrackContainer(id: string): void {
  live.delete(id);
}

/**
 * Runs at process exit (or on a fatal signal), where nothing asynchronous can finish: hands the containers still alive to
 * a detached Node process that deletes them through the Engine API after this one is gone. Only
 * plain HTTP endpoints (a Unix socket or http://) are handled; TLS endpoints are left to
 * `removeOrphanedSandboxes`.
 */
function onExit(): void {
  if (live.size === 0) return;
  const targets = [...live]
    .filter(([, { endpoint }]) => endpoint.socketPath !== undefined || endpoint.protocol === "http")
    .map(([id, { endpoint }]) => ({
      id,
      socketPath: endpoint.socketPath,
      host: endpoint.host,
      port: endpoint.port,
    }));
  if (targets.length === 0) return;
  const script = `
const http = require("node:http");
for (const t of ${JSON.stringify(targets)}) {
  const req = http.request({ socketPath: t.socketPath, host: t.host, port: t.port, method: "DELETE", path: "/containers/" + t.id + "?force=true&v=true", timeout: 10000 });
  req.on("response", (res) => res.resume());
  req.on("timeout", () => req.destroy());
  req.on("error", () => {});
  req.end();
}`;
  try {
    spawn(process.execPath, ["-e", script], { detached: true, stdio: "ignore" }).unref();
  } catch {
    // Best effort: removeOrphanedSandboxes() finds what is left.
  }
}
