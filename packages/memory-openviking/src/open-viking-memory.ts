import {
  type MemoryBackendV1,
  MemoryError,
  type MemoryV1,
  type OpenOptions,
  OpenRathError,
} from "@openrath/core";
import { isNotFound, toMemoryError } from "./internal/errors.js";
import { HttpClient } from "./internal/http-client.js";
import { DEFAULT_ROOT, Layout } from "./internal/layout.js";
import { OpenVikingStore } from "./internal/open-viking-store.js";
import { type OpenVikingMemorySpec, parseOpenVikingMemorySpec } from "./internal/spec.js";

/** Options of {@link openVikingMemory}: where the OpenViking server is and who we are to it. */
export interface OpenVikingMemoryOptions {
  /** Base URL of `openviking-server`. Default: `OPENVIKING_URL`, else `http://127.0.0.1:1933`. */
  readonly url?: string;
  /**
   * A user API key, sent as `X-API-Key`. Default: `OPENVIKING_API_KEY`; none for a server in
   * `dev` mode. A ROOT key is refused on data routes (`memory_unauthorized`).
   */
  readonly apiKey?: string;
  /**
   * `X-OpenViking-Account`: the OpenViking account to act in (default `"default"`). Honoured by
   * servers in `dev` and `trusted` mode; in `api_key` mode the key decides and the header is ignored.
   */
  readonly account?: string;
  /** `X-OpenViking-User` (default `"default"`), like `account`. */
  readonly user?: string;
  /** `X-OpenViking-Actor-Peer`, which narrows a current server's peer collection. Not sent unless set. */
  readonly actorPeer?: string;
  /**
   * The directory all entries live under. Default `viking://~/memories/openrath`: the caller's
   * memories, so writes refresh memory vectors. Give apps sharing a server different roots.
   */
  readonly root?: string;
  /** Timeout of each HTTP request in ms (default 60000, as the official clients). */
  readonly requestTimeoutMs?: number;
  /**
   * Also send each commit's new turns to an OpenViking session and commit it, so the server
   * archives them and runs its own memory extraction (default true).
   */
  readonly commitSessions?: boolean;
  /**
   * Send `wait: true` with every `content/batch-write`, so the server re-indexes the entries
   * before answering and a recall right after finds them (default true). Without it writes return
   * sooner, but recall may miss entries until the server's embedding queue catches up.
   */
  readonly waitForIndex?: boolean;
  /** Make `commit` wait for the server's extraction task and fail when it fails (default false). */
  readonly waitForExtraction?: boolean;
  /** How long `commit` waits for the extraction task with `waitForExtraction`, in ms (default 120000). */
  readonly extractionTimeoutMs?: number;
  /** Most nodes one `fs/ls` listing may return (`forget({ scope })` counts what it removes); default 100000. */
  readonly maxScan?: number;
  /** Most HTTP requests one call has in flight (default 8). */
  readonly concurrency?: number;
  /** The fetch to use (default `globalThis.fetch`). */
  readonly fetch?: typeof fetch;
}

const HEADER_VALUE = /^[\x21-\x7e]+$/;

function invalidOption(name: string, value: unknown, rule: string): OpenRathError {
  return new OpenRathError(
    "invalid_spec",
    `openVikingMemory option ${name} ${rule}; got ${JSON.stringify(value)}.`,
    {
      details: { option: name, value },
    },
  );
}

function positiveInt(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value <= 0) throw invalidOption(name, value, "must be a positive integer");
  return value;
}

function headerValue(
  name: string,
  value: string | undefined,
  fallback: string | undefined,
): string | undefined {
  if (value === undefined) return fallback;
  if (typeof value !== "string" || !HEADER_VALUE.test(value)) {
    throw invalidOption(
      name,
      value,
      "must be a non-empty printable ASCII string without spaces (it is sent as a header)",
    );
  }
  return value;
}

function env(name: string): string | undefined {
  const value = typeof process !== "undefined" ? process.env[name] : undefined;
  return value === undefined || value === "" ? undefined : value;
}

function baseUrl(url: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `http://${url}`;
  let parsed: URL;
  try {
    parsed = new URL(withScheme);
  } catch {
    throw invalidOption("url", url, 'must be a URL such as "http://127.0.0.1:1933"');
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw invalidOption("url", url, "must use http or https");
  }
  return `${parsed.origin}${parsed.pathname}`.replace(/\/+$/, "");
}

function checkRoot(root: string): string {
  const trimmed = root.replace(/\/+$/, "");
  const rest = trimmed.slice("viking://".length);
  if (
    !trimmed.startsWith("viking://") ||
    rest === "" ||
    rest.split("/").some((part) => part === "" || part === "." || part === "..") ||
    /[{}%?#\s]/.test(rest)
  ) {
    throw invalidOption(
      "root",
      root,
      'must be a viking:// directory URI such as "viking://~/memories/openrath"',
    );
  }
  return trimmed;
}

/**
 * The OpenViking memory backend (key `openviking`): entries are Markdown files in an OpenViking
 * context database, recalled through its `search/find`, over OpenViking's HTTP API (plain `fetch`,
 * no SDK). Every scope level is part of each entry's URI
 * (`<root>/<tenant>/<user>/<agent>/<session>/_entries/<id>.md`), so a recall reads only the
 * directories of its scope and the enclosing ones, whatever the server's auth mode.
 *
 * @example
 * ```ts
 * import { Session } from "@openrath/core";
 * import { openVikingMemory } from "@openrath/memory-openviking";
 *
 * const memory = await openVikingMemory({ url: "http://127.0.0.1:1933", apiKey: "…" }).open({
 *   scope: { tenant: "acme", user: "bob" },
 * });
 * await memory.remember({ text: "Bob prefers tabs over spaces" });
 * const hits = await memory.recall("tabs or spaces?"); // [{ entry, score }]
 * await memory.commit(Session.fromUserMessage("Deploy on Fridays is forbidden"));
 * await memory.close();
 * ```
 *
 * @throws {OpenRathError} `invalid_spec` for a bad option.
 * @throws {MemoryError} from `open`: `memory_unavailable` (server unreachable),
 *   `memory_unauthorized` (key missing, wrong or ROOT), `memory_remote_error`.
 */
export function openVikingMemory(
  options: OpenVikingMemoryOptions = {},
): MemoryBackendV1<OpenVikingMemorySpec | undefined, MemoryV1> {
  const requestTimeoutMs = positiveInt("requestTimeoutMs", options.requestTimeoutMs, 60_000);
  const extractionTimeoutMs = positiveInt("extractionTimeoutMs", options.extractionTimeoutMs, 120_000);
  const maxScan = positiveInt("maxScan", options.maxScan, 100_000);
  const concurrency = positiveInt("concurrency", options.concurrency, 8);
  const account = headerValue("account", options.account, "default")!;
  const user = headerValue("user", options.user, "default")!;
  if ("agent" in options) {
    throw invalidOption(
      "agent",
      (options as { agent?: unknown }).agent,
      "is not supported: OpenViking's server reads no agent header (identity is the key or account and user); pass actorPeer to narrow the peer collection",
    );
  }
  const actorPeer = headerValue("actorPeer", options.actorPeer, undefined);
  const root = checkRoot(options.root ?? DEFAULT_ROOT);
  if (options.url !== undefined) baseUrl(options.url);
  if (options.fetch !== undefined && typeof options.fetch !== "function") {
    throw invalidOption("fetch", typeof options.fetch, "must be a fetch function");
  }
  return {
    kind: "memory",
    key: "openviking",
    specVersion: "v1",
    capabilities: { vectorSearch: false, persistence: true, sharedWriters: true },
    parseSpec: parseOpenVikingMemorySpec,
    async open(spec: OpenVikingMemorySpec | undefined, openOptions: OpenOptions = {}) {
      const resolved = parseOpenVikingMemorySpec(spec);
      // Read at open time, so registering the backend before the environment is set works.
      const url = baseUrl(options.url ?? env("OPENVIKING_URL") ?? "http://127.0.0.1:1933");
      const apiKey = headerValue("apiKey", options.apiKey ?? env("OPENVIKING_API_KEY"), undefined);
      const fetchImpl = options.fetch ?? globalThis.fetch;
      if (typeof fetchImpl !== "function") {
        throw new MemoryError("memory_unavailable", "No fetch is available; pass option fetch.");
      }
      const client = new HttpClient({
        baseUrl: url,
        ...(apiKey !== undefined ? { apiKey } : {}),
        account,
        user,
        ...(actorPeer !== undefined ? { actorPeer } : {}),
        timeoutMs: requestTimeoutMs,
        fetch: fetchImpl,
      });
      const layout = new Layout(root);
      try {
        // Fail fast: is anyone there (/health), and does it let us in (an authenticated read).
        await client.health(openOptions.signal);
        try {
          await client.call({
            method: "GET",
            path: "/api/v1/fs/stat",
            query: { uri: layout.root },
            ...(openOptions.signal ? { signal: openOptions.signal } : {}),
          });
        } catch (error) {
          if (!isNotFound(error)) throw error;
        }
      } catch (error) {
        if (openOptions.signal?.aborted) {
          throw new OpenRathError("aborted", "Opening the OpenViking memory store was aborted.", {
            cause: error,
          });
        }
        throw toMemoryError(error, "Opening the OpenViking memory store", url);
      }
      return new OpenVikingStore({
        client,
        layout,
        baseUrl: url,
        scope: resolved.scope,
        commitSessions: options.commitSessions ?? true,
        waitForExtraction: options.waitForExtraction ?? false,
        extractionTimeoutMs,
        pollIntervalMs: 200,
        waitForIndex: options.waitForIndex ?? true,
        maxScan,
        concurrency,
      });
    },
  };
}

// In the module `./register` imports, so that importing only the register entry types the key.
declare module "@openrath/core" {
  interface MemoryBackends {
    /** OpenViking: entries in an OpenViking context database over HTTP (`@openrath/memory-openviking`). */
    openviking: OpenVikingMemorySpec | undefined;
  }
}
