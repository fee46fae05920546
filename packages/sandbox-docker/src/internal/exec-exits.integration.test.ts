import { mkdtempSync, rmSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SandboxV1 } from "@openrath/core";
import { serviceAvailable } from "@openrath/testing";
import Dockerode from "dockerode";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { dockerSandbox } from "../docker-sandbox.js";

// Engine API requests per command, counted by a proxy between the backend and the daemon; the
// proxy can also withhold or cut the event stream, to check the fallback to inspecting execs.

const image = process.env.OPENRATH_TEST_DOCKER_IMAGE ?? "openrath-test/busybox:1";
const docker = new Dockerode();
const check = await serviceAvailable("docker", async () => {
  await docker.ping();
  await docker.getImage(image).inspect();
  return true;
});

interface Proxy {
  readonly socketPath: string;
  /** Requests by `METHOD route`, ids replaced by `:id`. */
  readonly requests: Map<string, number>;
  /** `forward` passes event streams on; `mute` answers them and sends nothing; */
  events: "forward" | "mute";
  /** Cuts the open event streams. */
  cutEvents(): void;
  close(): Promise<void>;
}

/** The daemon the test client talks to (its socket path may be computed). */
async function daemonAddress(): Promise<{ path: string } | { port: number; host: string }> {
  const modem = docker.modem as {
    socketPath?: string | (() => string | Promise<string>);
    host?: string;
    port?: number | string;
  };
  if (modem.host) return { port: Number(modem.port), host: modem.host };
  const path = typeof modem.socketPath === "function" ? await modem.socketPath() : modem.socketPath;
  return { path: path ?? "/var/run/docker.sock" };
}
const address = check.available ? await daemonAddress() : { path: "/var/run/docker.sock" };

function upstream(): Socket {
  return "path" in address ? connect(address.path) : connect(address.port, address.host);
}

let proxies = 0;

async function startProxy(dir: string): Promise<Proxy> {
  // A fresh path each time: the client's keep-alive pool would hand a new proxy an old connection.
  const socketPath = join(dir, `docker-${++proxies}.sock`);
  const requests = new Map<string, number>();
  const eventSockets = new Set<Socket>();
  const proxy: Proxy = {
    socketPath,
    requests,
    events: "forward",
    cutEvents: () => {
      for (const socket of eventSockets) socket.destroy();
    },
    close: () =>
      new Promise((resolve) => {
        // Idle keep-alive connections would hold close() for seconds.
        for (const socket of clients) socket.destroy();
        server.close(() => resolve());
      }),
  };
  const clients = new Set<Socket>();
  const server: Server = createServer((client) => {
    clients.add(client);
    client.once("close", () => clients.delete(client));
    let target: Socket | undefined;
    let muted = false;
    let raw = false;
    const forward = (chunk: Buffer) => {
      if (!target) {
        target = upstream();
        target.on("data", (data) => client.write(data));
        target.on("end", () => client.end());
        target.on("error", () => client.destroy());
        client.on("end", () => target?.end());
      }
      target.write(chunk);
    };
    client.on("data", (chunk) => {
      if (muted) return;
      if (!raw) {
        const line = /^(GET|POST|PUT|DELETE|HEAD) (\S+) HTTP\/1\.[01]\r\n/m.exec(chunk.toString("latin1"));
        const path = line ? line[2]!.split("?")[0]!.replace(/^\/v[\d.]+/, "") : "";
        if (line) {
          const route = `${line[1]} ${path.replace(/[0-9a-f]{64}/g, ":id")}`;
          requests.set(route, (requests.get(route) ?? 0) + 1);
        }
        if (path === "/events") {
          eventSockets.add(client);
          client.once("close", () => eventSockets.delete(client));
          if (proxy.events === "mute") {
            muted = true;
            client.write(
              "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
            );
            return;
          }
        }
        // After an exec start (hijacked) or an event stream, the rest is not requests.
        if (/\/start$/.test(path) || path === "/events") raw = true;
      }
      forward(chunk);
    });
    client.on("error", () => target?.destroy());
    client.on("close", () => target?.destroy());
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return proxy;
}

describe.skipIf(!check.available)(`docker exec exits (${check.reason})`, () => {
  const dir = mkdtempSync(join(tmpdir(), "openrath-docker-proxy-"));
  const opened: SandboxV1[] = [];
  let proxy: Proxy | undefined;
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((sandbox) => sandbox.close()));
    await proxy?.close();
    proxy = undefined;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function open(mode: Proxy["events"]): Promise<{ sandbox: SandboxV1; proxy: Proxy }> {
    proxy = await startProxy(dir);
    proxy.events = mode;
    const backend = dockerSandbox({
      docker: { socketPath: proxy.socketPath },
      labels: { "openrath-test": "exec-exits" },
    });
    const sandbox = await backend.open(backend.parseSpec!({ image }));
    opened.push(sandbox);
    proxy.requests.clear();
    return { sandbox, proxy };
  }

  const count = (proxy: Proxy, route: string) => proxy.requests.get(route) ?? 0;

  it("takes exit codes from the daemon's events: a command costs a create and a start, no inspect", async () => {
    const { sandbox, proxy } = await open("forward");
    for (let i = 0; i < 10; i++) expect((await sandbox.exec(`exit ${i}`)).exitCode).toBe(i);
    expect(count(proxy, "POST /containers/:id/exec")).toBe(10);
    expect(count(proxy, "POST /exec/:id/start")).toBe(10);
    // An exec whose output ends well before its process may still be inspected under load.
    expect(count(proxy, "GET /exec/:id/json")).toBeLessThanOrEqual(2);
  });

  it("inspects execs when the daemon sends no events", async () => {
    const { sandbox, proxy } = await open("mute");
    for (let i = 0; i < 5; i++) expect((await sandbox.exec(`exit ${i + 3}`)).exitCode).toBe(i + 3);
    expect(count(proxy, "GET /exec/:id/json")).toBeGreaterThanOrEqual(5);
  });

  it("keeps exit codes right when the event stream breaks between commands", async () => {
    const { sandbox, proxy } = await open("forward");
    expect((await sandbox.exec("exit 4")).exitCode).toBe(4);
    proxy.cutEvents();
    for (let i = 0; i < 3; i++) expect((await sandbox.exec(`exit ${i + 5}`)).exitCode).toBe(i + 5);
    expect(count(proxy, "GET /exec/:id/json")).toBeGreaterThanOrEqual(3);
  });
});
