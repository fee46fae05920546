/**
 * A wire-faithful fake of OpenSandbox for tests: the lifecycle server (FastAPI, under `/v1` and
 * `/`) and one execd per sandbox (gin, on its own port, reached through an endpoint with a
 * `/proxy/44772` path prefix, as Docker bridge mode hands it out). It implements
 * backends-wire.md §3.1: status codes, the three error body shapes, omitted-vs-null fields, the
 * `{json}\n\n` event stream without `data:`, and the failure cases E1–E7 and X1–X7. Commands and
 * Python cells really run, in bubblewrap, with a host temp dir bound at `/workspace` (and one at
 * `/tmp`) and every namespace unshared (so no network).
 *
 * Known differences from a real deployment are listed in the package README. Commands of one
 * sandbox share one namespace (see fake-container.ts), so an interrupt that signals a command's
 * process group misses a descendant that left it, as with real execd; bash sessions, PTYs,
 * snapshots and egress are not implemented.
 *
 * Not exported from the package: tests import it relatively.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ExecdHooks, FakeExecd, type StreamDrop } from "./fake-execd.js";
import { readBody, sendEmpty, sendJson } from "./fake-http.js";

export { bwrapWorks } from "./bwrap.js";
export type { StreamDrop } from "./fake-execd.js";

/** Sandbox states of the lifecycle API. */
export type FakeSandboxState =
  | "Pending"
  | "Running"
  | "Pausing"
  | "Paused"
  | "Resuming"
  | "Stopping"
  | "Terminated"
  | "Failed";

/** How the next created sandbox behaves. Every field defaults to the server's options. */
export interface FakeSandboxScript {
  /** State in the create response: `Pending` (the spec, Kubernetes) or `Running` (Docker). */
  readonly createState?: "Pending" | "Running";
  /** `GET`s that still answer `Pending` before the sandbox turns `Running`. */
  readonly pendingPolls?: number;
  /** Fail provisioning: after `afterPolls` `GET`s the sandbox is `Failed` with `PROVISIONING_ERROR`. */
  readonly failProvisioning?: { readonly afterPolls?: number; readonly message?: string };
  /** Pings that fail before execd answers. */
  readonly pingFailures?: number;
  /** How those pings fail. */
  readonly pingFailureMode?: "status" | "reset";
}

/** Options of {@link startFakeOpenSandbox}. */
export interface FakeOpenSandboxOptions extends FakeSandboxScript {
  /** Require `OPEN-SANDBOX-API-KEY` (E1). */
  readonly apiKey?: string;
  /** Require `X-EXECD-ACCESS-TOKEN` on every execd call (X4). */
  readonly execdAccessToken?: string;
  /** Hand out `headers` with each endpoint and require them on execd calls (the Kubernetes gateway shape). */
  readonly endpointHeaders?: Record<string, string>;
  /** Largest `timeout` a create may ask for (E4). Default 86400. */
  readonly maxTimeoutSeconds?: number;
  /** Serve `GET /directories/list` (execd ≥ v1.0.19). Default true. */
  readonly directoriesList?: boolean;
  /** How long a stream stays open after its terminal event. Default 1000 ms, as execd. */
  readonly gracefulDelayMs?: number;
  /** Interval of `ping` events in streams. Default 3000 ms. */
  readonly pingIntervalMs?: number;
  /** Sandbox path of the writable workspace mount. Default `/workspace`. */
  readonly workspace?: string;
}

/** A scripted failure of one route. */
export interface FaultRule {
  /** HTTP method; any when absent. */
  readonly method?: string;
  /**
   * Path to match: lifecycle paths as requested (`/v1/sandboxes`), execd paths relative to
   * execd's root (`/command`, `/files/upload`). A string matches exactly.
   */
  readonly path: string | RegExp;
  /** Status to answer with (default 500). */
  readonly status?: number;
  /** JSON body (default a `{code, message}` error). */
  readonly body?: unknown;
  /** Reset the connection instead of answering. */
  readonly reset?: boolean;
  /** How many requests it affects (default 1; `Infinity` for all). */
  readonly times?: number;
}

/** One request the fake answered, for assertions. */
export interface FakeRequest {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  /** `lifecycle` or the sandbox id whose execd answered. */
  readonly server: string;
}

/** A sandbox as the fake holds it. */
export interface FakeSandbox {
  readonly id: string;
  state: FakeSandboxState;
  reason?: string;
  message?: string;
  lastTransitionAt: Date;
  readonly createdAt: Date;
  expiresAt: Date | null;
  readonly image?: { uri: string };
  readonly snapshotId?: string;
  readonly entrypoint: string[];
  readonly env: Record<string, string>;
  metadata?: Record<string, string>;
  readonly resourceLimits: Record<string, string>;
  readonly platform?: unknown;
  /** Host directory behind the sandbox's workspace. */
  readonly workspaceDir: string;
  /** Host directory behind the sandbox's `/tmp`. */
  readonly tmpDir: string;
  readonly execd: FakeExecd;
  /** Every `renew-expiration` the sandbox received. */
  readonly renewals: Date[];
  polls: number;
  readonly script: FakeSandboxScript;
  execdServer?: Server;
  execdPort?: number;
}

/** The running fake. */
export interface FakeOpenSandbox {
  /** `127.0.0.1:<port>`, what `OPEN_SANDBOX_DOMAIN` takes. */
  readonly domain: string;
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Live sandboxes by id. */
  readonly sandboxes: ReadonlyMap<string, FakeSandbox>;
  /** Ids of every sandbox ever created, in order. */
  readonly created: readonly string[];
  /** Ids of deleted sandboxes, in order. */
  readonly deleted: readonly string[];
  /** Every request answered so far. */
  readonly requests: readonly FakeRequest[];
  /** Scripts failures. */
  readonly control: FakeControl;
  /** Commands and code cells still running across all sandboxes. */
  running(): number;
  /** Stops everything and removes every sandbox's directories. */
  close(): Promise<void>;
}

/** The control hook: scripted failures, applied in the order they were added. */
export interface FakeControl {
  /** Answer matching requests with an error (or reset the connection). */
  fail(rule: FaultRule): void;
  /** Break the next streaming response(s) of `/command` (or `/code`) before the terminal event. */
  dropStream(options?: StreamDrop & { readonly route?: "/command" | "/code"; readonly times?: number }): void;
  /** Make the next created sandbox behave as scripted (pending polls, failed provisioning, failing pings). */
  nextSandbox(script: FakeSandboxScript): void;
  /** Fail the next `k` pings of a live sandbox. */
  failPings(sandboxId: string, k: number, mode?: "status" | "reset"): void;
  /** Drops every scripted failure. */
  reset(): void;
}

const BASE_ENV = {
  PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
  HOME: "/root",
  LANG: "C.UTF-8",
};
const EXECD_PORT = 44772;

function notFound(id: string) {
  return { code: "DOCKER::SANDBOX_NOT_FOUND", message: `Sandbox ${id} not found.` };
}

/** FastAPI's 422 body. */
function validation(errors: { type: string; loc: (string | number)[]; msg: string; input?: unknown }[]) {
  return { detail: errors };
}

function isStringMap(value: unknown): value is Record<string, string> {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((v) => typeof v === "string")
  );
}

/** Reads a field under its camelCase or snake_case name (the server accepts both). */
function field(body: Record<string, unknown>, camel: string): unknown {
  if (camel in body) return body[camel];
  const snake = camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  return body[snake];
}

/** Starts the fake on `127.0.0.1:0`. */
export async function startFakeOpenSandbox(options: FakeOpenSandboxOptions = {}): Promise<FakeOpenSandbox> {
  const root = mkdtempSync(join(tmpdir(), "fake-opensandbox-"));
  const sandboxes = new Map<string, FakeSandbox>();
  const created: string[] = [];
  const deleted: string[] = [];
  const requests: FakeRequest[] = [];
  let faults: (FaultRule & { left: number })[] = [];
  let drops: { route: "/command" | "/code"; drop: StreamDrop; left: number }[] = [];
  let scripts: FakeSandboxScript[] = [];
  const workspace = options.workspace ?? "/workspace";
  const maxTimeout = options.maxTimeoutSeconds ?? 86_400;
  let port = 0;

  const matchFault = (
    method: string,
    path: string,
  ): { status: number; body?: unknown } | "reset" | undefined => {
    for (const rule of faults) {
      if (rule.left <= 0) continue;
      if (rule.method && rule.method.toUpperCase() !== method) continue;
      if (typeof rule.path === "string" ? rule.path !== path : !rule.path.test(path)) continue;
      rule.left--;
      faults = faults.filter((f) => f.left > 0);
      if (rule.reset) return "reset";
      return {
        status: rule.status ?? 500,
        body: rule.body ?? {
          code: "GENERAL::UNKNOWN_ERROR",
          message: `injected failure of ${method} ${path}`,
        },
      };
    }
    return undefined;
  };

  const hooks: ExecdHooks = {
    fault: matchFault,
    takeStreamDrop(route) {
      const found = drops.find((d) => d.route === route && d.left > 0);
      if (!found) return undefined;
      found.left--;
      drops = drops.filter((d) => d.left > 0);
      return found.drop;
    },
  };

  const transition = (sandbox: FakeSandbox, state: FakeSandboxState, reason?: string, message?: string) => {
    sandbox.state = state;
    sandbox.reason = reason;
    sandbox.message = message;
    sandbox.lastTransitionAt = new Date();
  };

  const removeSandbox = async (sandbox: FakeSandbox) => {
    sandboxes.delete(sandbox.id);
    deleted.push(sandbox.id);
    const server = sandbox.execdServer;
    if (server?.listening) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    await sandbox.execd.killAll();
    rmSync(join(root, sandbox.id), { recursive: true, force: true });
  };

  const sweeper = setInterval(() => {
    const now = Date.now();
    for (const sandbox of sandboxes.values()) {
      if (sandbox.expiresAt && sandbox.expiresAt.getTime() <= now) void removeSandbox(sandbox);
    }
  }, 250);
  sweeper.unref();

  const sandboxJson = (sandbox: FakeSandbox, withImage: boolean) => ({
    id: sandbox.id,
    ...(withImage && sandbox.image ? { image: sandbox.image } : {}),
    ...(withImage && sandbox.snapshotId ? { snapshotId: sandbox.snapshotId } : {}),
    status: {
      state: sandbox.state,
      ...(sandbox.reason ? { reason: sandbox.reason } : {}),
      ...(sandbox.message ? { message: sandbox.message } : {}),
      lastTransitionAt: sandbox.lastTransitionAt.toISOString(),
    },
    ...(sandbox.metadata ? { metadata: sandbox.metadata } : {}),
    ...(sandbox.platform ? { platform: sandbox.platform } : {}),
    ...(sandbox.expiresAt ? { expiresAt: sandbox.expiresAt.toISOString() } : {}),
    createdAt: sandbox.createdAt.toISOString(),
    entrypoint: sandbox.entrypoint,
  });

  /** Advances a sandbox's scripted state on each `GET`. */
  const poll = (sandbox: FakeSandbox) => {
    sandbox.polls++;
    const fail = sandbox.script.failProvisioning;
    if (fail && sandbox.state !== "Failed" && sandbox.polls >= (fail.afterPolls ?? 1)) {
      transition(
        sandbox,
        "Failed",
        "PROVISIONING_ERROR",
        fail.message ?? "Failed to provision sandbox: image pull failed (scripted).",
      );
      const server = sandbox.execdServer;
      if (server?.listening) {
        server.closeAllConnections();
        server.close();
      }
      void sandbox.execd.killAll();
      return;
    }
    if (!fail && sandbox.state === "Pending" && sandbox.polls >= (sandbox.script.pendingPolls ?? 1)) {
      transition(sandbox, "Running", "CONTAINER_RUNNING", "Container is running");
    }
  };

  const startExecd = async (sandbox: FakeSandbox) => {
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://execd");
      const path = url.pathname.replace(new RegExp(`^/proxy/${EXECD_PORT}(?=/|$)`), "") || "/";
      res.on("close", () =>
        requests.push({ method: req.method ?? "GET", path, status: res.statusCode, server: sandbox.id }),
      );
      void sandbox.execd.handle(req, res, path, url.searchParams);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    sandbox.execdServer = server;
    sandbox.execdPort = (server.address() as AddressInfo).port;
  };

  const create = async (req: IncomingMessage, send: Send) => {
    const raw = await readBody(req);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw.toString("utf8"));
    } catch {
      return send(
        422,
        validation([{ type: "json_invalid", loc: ["body", 0], msg: "JSON decode error", input: {} }]),
      );
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      return send(
        422,
        validation([
          {
            type: "model_attributes_type",
            loc: ["body"],
            msg: "Input should be a valid dictionary",
            input: body,
          },
        ]),
      );
    }
    const errors: { type: string; loc: (string | number)[]; msg: string; input?: unknown }[] = [];
    const image = field(body, "image");
    const snapshotId = field(body, "snapshotId");
    const entrypoint = field(body, "entrypoint");
    const resourceLimits = field(body, "resourceLimits");
    const timeout = field(body, "timeout");
    const env = field(body, "env");
    const metadata = field(body, "metadata");
    const extensions = field(body, "extensions");
    if (image !== undefined && image !== null) {
      const uri = (image as { uri?: unknown }).uri;
      if (typeof uri !== "string" || uri === "") {
        errors.push({ type: "missing", loc: ["body", "image", "uri"], msg: "Field required", input: image });
      }
    }
    if (entrypoint !== undefined && entrypoint !== null) {
      if (!Array.isArray(entrypoint) || entrypoint.some((e) => typeof e !== "string")) {
        errors.push({
          type: "list_type",
          loc: ["body", "entrypoint"],
          msg: "Input should be a valid list",
          input: entrypoint,
        });
      } else if (entrypoint.length === 0) {
        errors.push({
          type: "too_short",
          loc: ["body", "entrypoint"],
          msg: "List should have at least 1 item after validation, not 0",
          input: entrypoint,
        });
      }
    }
    const poolRef = isStringMap(extensions) ? extensions.poolRef : undefined;
    if (resourceLimits === undefined || resourceLimits === null) {
      if (!poolRef)
        errors.push({ type: "missing", loc: ["body", "resourceLimits"], msg: "Field required", input: body });
    } else if (!isStringMap(resourceLimits)) {
      errors.push({
        type: "dict_type",
        loc: ["body", "resourceLimits"],
        msg: "Input should be a valid dictionary",
        input: resourceLimits,
      });
    }
    if (timeout !== undefined && timeout !== null) {
      if (typeof timeout !== "number" || !Number.isInteger(timeout)) {
        errors.push({
          type: "int_type",
          loc: ["body", "timeout"],
          msg: "Input should be a valid integer",
          input: timeout,
        });
      } else if (timeout < 60) {
        errors.push({
          type: "greater_than_equal",
          loc: ["body", "timeout"],
          msg: "Input should be greater than or equal to 60",
          input: timeout,
        });
      }
    }
    for (const [name, value] of [
      ["env", env],
      ["metadata", metadata],
    ] as const) {
      if (value !== undefined && value !== null && !isStringMap(value)) {
        errors.push({
          type: "dict_type",
          loc: ["body", name],
          msg: "Input should be a valid dictionary",
          input: value,
        });
      }
    }
    const hasImage = image !== undefined && image !== null;
    const hasSnapshot = snapshotId !== undefined && snapshotId !== null;
    if (errors.length === 0 && hasImage === hasSnapshot) {
      errors.push({
        type: "value_error",
        loc: ["body"],
        msg: "Value error, exactly one of image or snapshotId must be provided",
        input: body,
      });
    }
    if (errors.length === 0 && hasImage && (entrypoint === undefined || entrypoint === null)) {
      errors.push({
        type: "value_error",
        loc: ["body"],
        msg: "Value error, entrypoint is required when image is set",
        input: body,
      });
    }
    if (errors.length > 0) return send(422, validation(errors));
    if (typeof timeout === "number" && timeout > maxTimeout) {
      return send(400, {
        code: "SANDBOX::INVALID_PARAMETER",
        message: `Sandbox timeout ${timeout}s exceeds the maximum allowed ${maxTimeout}s.`,
      });
    }
    if (isStringMap(metadata) && Object.keys(metadata).some((k) => k.startsWith("opensandbox.io/"))) {
      return send(400, {
        code: "INVALID_METADATA_FORMAT",
        message: "Metadata keys with the reserved prefix 'opensandbox.io/' are not allowed.",
      });
    }

    const script = { ...pickScript(options), ...(scripts.shift() ?? {}) };
    const id = randomUUID();
    const dir = join(root, id);
    const workspaceDir = join(dir, "workspace");
    const tmpDir = join(dir, "tmp");
    mkdirSync(workspaceDir, { recursive: true });
    mkdirSync(tmpDir, { recursive: true });
    const now = new Date();
    const sandboxEnv = { ...BASE_ENV, ...(isStringMap(env) ? env : {}) };
    const sandbox: FakeSandbox = {
      id,
      state: script.createState ?? "Pending",
      lastTransitionAt: now,
      createdAt: now,
      expiresAt: typeof timeout === "number" ? new Date(now.getTime() + timeout * 1000) : null,
      ...(hasImage ? { image: { uri: (image as { uri: string }).uri } } : {}),
      ...(hasSnapshot ? { snapshotId: String(snapshotId) } : {}),
      entrypoint: Array.isArray(entrypoint) ? (entrypoint as string[]) : ["tail", "-f", "/dev/null"],
      env: sandboxEnv,
      ...(isStringMap(metadata) ? { metadata: { ...metadata } } : {}),
      resourceLimits: isStringMap(resourceLimits) ? resourceLimits : {},
      ...(field(body, "platform") ? { platform: field(body, "platform") } : {}),
      workspaceDir,
      tmpDir,
      renewals: [],
      polls: 0,
      script,
      execd: new FakeExecd({
        mounts: [
          { path: workspace, host: workspaceDir },
          { path: "/tmp", host: tmpDir },
        ],
        env: sandboxEnv,
        ...(options.execdAccessToken !== undefined ? { accessToken: options.execdAccessToken } : {}),
        ...(options.endpointHeaders ? { requiredHeaders: options.endpointHeaders } : {}),
        directoriesList: options.directoriesList ?? true,
        gracefulDelayMs: options.gracefulDelayMs ?? 1000,
        pingIntervalMs: options.pingIntervalMs ?? 3000,
        pingFailures: script.pingFailures ?? 0,
        pingFailureMode: script.pingFailureMode ?? "status",
        hooks,
      }),
    };
    if (sandbox.state === "Running") sandbox.reason = "CONTAINER_RUNNING";
    await startExecd(sandbox);
    sandboxes.set(id, sandbox);
    created.push(id);
    send(202, sandboxJson(sandbox, false), { Location: `/v1/sandboxes/${id}` });
  };

  const list = (url: URL, send: Send) => {
    const states = url.searchParams.getAll("state");
    const metadataFilter = new URLSearchParams(url.searchParams.get("metadata") ?? "");
    const page = Number(url.searchParams.get("page") ?? "1");
    const pageSize = Number(url.searchParams.get("pageSize") ?? url.searchParams.get("page_size") ?? "20");
    const badPage = !Number.isInteger(page) || page < 1;
    const badSize = !Number.isInteger(pageSize) || pageSize < 1 || pageSize > 200;
    if (badPage || badSize) {
      return send(
        422,
        validation([
          ...(badPage
            ? [
                {
                  type: "greater_than_equal",
                  loc: ["query", "page"],
                  msg: "Input should be greater than or equal to 1",
                },
              ]
            : []),
          ...(badSize
            ? [
                {
                  type: "less_than_equal",
                  loc: ["query", "pageSize"],
                  msg: "Input should be between 1 and 200",
                },
              ]
            : []),
        ]),
      );
    }
    const matching = [...sandboxes.values()]
      .filter((s) => states.length === 0 || states.includes(s.state))
      .filter((s) => [...metadataFilter].every(([k, v]) => s.metadata?.[k] === v))
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
    const totalPages = Math.ceil(matching.length / pageSize);
    send(200, {
      items: matching.slice((page - 1) * pageSize, page * pageSize).map((s) => sandboxJson(s, true)),
      pagination: {
        page,
        pageSize,
        totalItems: matching.length,
        totalPages,
        hasNextPage: page < totalPages,
      },
    });
  };

  const renew = async (req: IncomingMessage, sandbox: FakeSandbox, send: Send) => {
    let body: { expiresAt?: unknown; expires_at?: unknown };
    try {
      body = JSON.parse((await readBody(req)).toString("utf8"));
    } catch {
      return send(
        422,
        validation([{ type: "json_invalid", loc: ["body", 0], msg: "JSON decode error", input: {} }]),
      );
    }
    const value = body?.expiresAt ?? body?.expires_at;
    const when = typeof value === "string" ? new Date(value) : new Date(Number.NaN);
    if (Number.isNaN(when.getTime())) {
      return send(
        422,
        validation([
          {
            type: "datetime_from_date_parsing",
            loc: ["body", "expiresAt"],
            msg: "Input should be a valid datetime",
            input: value,
          },
        ]),
      );
    }
    if (!sandbox.expiresAt) {
      return send(409, {
        code: "DOCKER::INVALID_EXPIRATION",
        message: `Sandbox ${sandbox.id} was created without a timeout and cannot be renewed.`,
      });
    }
    if (when.getTime() <= Date.now()) {
      return send(400, {
        code: "DOCKER::INVALID_EXPIRATION",
        message: "New expiration time must be in the future.",
      });
    }
    sandbox.expiresAt = when;
    sandbox.renewals.push(new Date());
    send(200, { expiresAt: when.toISOString() });
  };

  const endpoint = (url: URL, sandbox: FakeSandbox, rawPort: string, send: Send) => {
    const target = Number(rawPort);
    if (!/^\d+$/.test(rawPort) || target < 1 || target > 65535) {
      return send(400, { code: "DOCKER::INVALID_PORT", message: `Invalid port ${rawPort}.` });
    }
    const proxy = url.searchParams.get("use_server_proxy") === "true";
    if (url.searchParams.has("expires")) {
      return send(400, {
        code: proxy ? "SANDBOX::INVALID_PARAMETER" : "SANDBOX::API_NOT_SUPPORTED",
        message: proxy
          ? "expires cannot be combined with use_server_proxy."
          : "Signed endpoints are not supported by the Docker runtime.",
      });
    }
    const address = proxy
      ? `127.0.0.1:${port}/sandboxes/${sandbox.id}/proxy/${target}`
      : `127.0.0.1:${sandbox.execdPort}/proxy/${target}`;
    send(200, {
      endpoint: address,
      ...(options.endpointHeaders ? { headers: options.endpointHeaders } : {}),
    });
  };

  const lifecycle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://lifecycle");
    const method = req.method ?? "GET";
    const requestId = (req.headers["x-request-id"] as string | undefined) ?? randomUUID();
    const send: Send = (status, body, headers = {}) => {
      if (status === 204 || body === undefined)
        sendEmpty(res, status, { "X-Request-ID": requestId, ...headers });
      else sendJson(res, status, body, { "X-Request-ID": requestId, ...headers });
    };
    res.on("close", () =>
      requests.push({ method, path: url.pathname, status: res.statusCode, server: "lifecycle" }),
    );

    // `?use_server_proxy=true` endpoints: the server proxies to execd; exempt from the API key.
    const proxied = /^(?:\/v1)?\/sandboxes\/([^/]+)\/proxy\/(\d+)(\/.*)?$/.exec(url.pathname);
    if (proxied) {
      const sandbox = sandboxes.get(proxied[1]!);
      if (!sandbox) return send(404, notFound(proxied[1]!));
      if (Number(proxied[2]) !== EXECD_PORT) {
        return send(502, { code: "SANDBOX::PROXY_ERROR", message: `Nothing listens on port ${proxied[2]}.` });
      }
      return sandbox.execd.handle(req, res, proxied[3] ?? "/", url.searchParams);
    }
    const path = url.pathname.replace(/^\/v1(?=\/|$)/, "") || "/";
    // /health is mounted at the root only (the routers, not it, are mounted at / and /v1).
    if (url.pathname === "/health") {
      if (method !== "GET") return send(405, { detail: "Method Not Allowed" });
      return send(200, { status: "healthy" });
    }
    if (options.apiKey !== undefined) {
      const given = req.headers["open-sandbox-api-key"];
      if (given === undefined || given === "") {
        return send(401, {
          code: "MISSING_API_KEY",
          message: "Authentication credentials are missing. Provide API key via OPEN-SANDBOX-API-KEY header.",
        });
      }
      if (given !== options.apiKey) {
        return send(401, {
          code: "INVALID_API_KEY",
          message: "Authentication credentials are invalid. Check your API key and try again.",
        });
      }
    }
    const fault = matchFault(method, url.pathname);
    if (fault === "reset") {
      req.socket.destroy();
      return;
    }
    if (fault) return send(fault.status, fault.body);

    if (path === "/sandboxes") {
      if (method === "POST") return create(req, send);
      if (method === "GET") return list(url, send);
      return send(405, { detail: "Method Not Allowed" });
    }
    const match =
      /^\/sandboxes\/([^/]+)(?:\/(renew-expiration|pause|resume|metadata|endpoints\/([^/]+)))?$/.exec(path);
    if (!match) return send(404, { detail: "Not Found" });
    const sandbox = sandboxes.get(match[1]!);
    const action = match[2];
    const allowed: Record<string, string[]> = {
      "": ["GET", "DELETE"],
      "renew-expiration": ["POST"],
      pause: ["POST"],
      resume: ["POST"],
      metadata: ["PATCH"],
      endpoints: ["GET"],
    };
    const key = action?.startsWith("endpoints/") ? "endpoints" : (action ?? "");
    if (!allowed[key]?.includes(method)) return send(405, { detail: "Method Not Allowed" });
    if (!sandbox) return send(404, notFound(match[1]!));
    if (key === "") {
      if (method === "GET") {
        poll(sandbox);
        return send(200, sandboxJson(sandbox, true));
      }
      await removeSandbox(sandbox);
      return send(204);
    }
    if (key === "renew-expiration") return renew(req, sandbox, send);
    if (key === "endpoints") return endpoint(url, sandbox, match[3]!, send);
    if (key === "pause") {
      if (sandbox.state !== "Running") {
        return send(409, {
          code: "DOCKER::SANDBOX_NOT_RUNNING",
          message: `Sandbox ${sandbox.id} is not running (state ${sandbox.state}).`,
        });
      }
      transition(sandbox, "Paused", "CONTAINER_PAUSED", "Container is paused");
      return send(202);
    }
    if (key === "resume") {
      if (sandbox.state !== "Paused") {
        return send(409, {
          code: "DOCKER::SANDBOX_NOT_PAUSED",
          message: `Sandbox ${sandbox.id} is not paused (state ${sandbox.state}).`,
        });
      }
      transition(sandbox, "Running", "CONTAINER_RUNNING", "Container is running");
      return send(202);
    }
    let patch: Record<string, unknown>;
    try {
      patch = JSON.parse((await readBody(req)).toString("utf8"));
    } catch {
      return send(
        422,
        validation([{ type: "json_invalid", loc: ["body", 0], msg: "JSON decode error", input: {} }]),
      );
    }
    const merged: Record<string, string> = { ...(sandbox.metadata ?? {}) };
    for (const [k, v] of Object.entries(patch ?? {})) {
      if (v === null) delete merged[k];
      else if (typeof v === "string") merged[k] = v;
      else
        return send(400, {
          code: "INVALID_METADATA_FORMAT",
          message: `Metadata value of ${k} must be a string or null.`,
        });
    }
    sandbox.metadata = merged;
    return send(200, sandboxJson(sandbox, true));
  };

  const server = createServer((req, res) => {
    lifecycle(req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        sendJson(res, 500, { code: "GENERAL::UNKNOWN_ERROR", message: (error as Error).message });
      } else {
        res.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;

  const control: FakeControl = {
    fail(rule) {
      faults.push({ ...rule, left: rule.times ?? 1 });
    },
    dropStream(drop = {}) {
      const { route = "/command", times = 1, ...rest } = drop;
      drops.push({ route, drop: rest, left: times });
    },
    nextSandbox(script) {
      scripts.push(script);
    },
    failPings(sandboxId, k, mode = "status") {
      const sandbox = sandboxes.get(sandboxId);
      if (!sandbox) throw new Error(`no sandbox ${sandboxId}`);
      sandbox.execd.options.pingFailures = k;
      sandbox.execd.options.pingFailureMode = mode;
    },
    reset() {
      faults = [];
      drops = [];
      scripts = [];
    },
  };

  return {
    domain: `127.0.0.1:${port}`,
    url: `http://127.0.0.1:${port}`,
    sandboxes,
    created,
    deleted,
    requests,
    control,
    running() {
      let n = 0;
      for (const sandbox of sandboxes.values()) n += sandbox.execd.running();
      return n;
    },
    async close() {
      clearInterval(sweeper);
      await Promise.all([...sandboxes.values()].map((s) => removeSandbox(s)));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}

type Send = (status: number, body?: unknown, headers?: Record<string, string>) => void;

function pickScript(options: FakeOpenSandboxOptions): FakeSandboxScript {
  return {
    ...(options.createState ? { createState: options.createState } : {}),
    ...(options.pendingPolls !== undefined ? { pendingPolls: options.pendingPolls } : {}),
    ...(options.failProvisioning ? { failProvisioning: options.failProvisioning } : {}),
    ...(options.pingFailures !== undefined ? { pingFailures: options.pingFailures } : {}),
    ...(options.pingFailureMode ? { pingFailureMode: options.pingFailureMode } : {}),
  };
}
