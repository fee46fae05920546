import {
  type MemoryBackendV1,
  MemoryError,
  type MemoryV1,
  type OpenOptions,
  OpenRathError,
} from "@openrath/core";
import { checkOptions, checkSpec, normalizeScope } from "@openrath/core/backend";
import { isNotFound, toMemoryError } from "./internal/errors.js";
import { HttpClient } from "./internal/http-client.js";
import { Layout } from "./internal/layout.js";
import { OpenVikingStore } from "./internal/open-viking-store.js";
import { baseUrlOf, OpenVikingMemoryOptionsSchema, OpenVikingMemorySpecSchema } from "./internal/schemas.js";
import { checkScope, type OpenVikingMemorySpec, type ResolvedOpenVikingMemorySpec } from "./internal/spec.js";

export type { OpenVikingMemorySpec } from "./internal/spec.js";

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

function env(name: string): string | undefined {
  const value = typeof process !== "undefined" ? process.env[name] : undefined;
  return value === undefined || value === "" ? undefined : value;
}

/** The server's base URL: the option, else `OPENVIKING_URL`, else the local default. */
function serverUrl(option: string | undefined): string {
  if (option !== undefined) return baseUrlOf(option)!;
  const fromEnv = env("OPENVIKING_URL");
  const url = baseUrlOf(fromEnv ?? "http://127.0.0.1:1933");
  if (url === undefined) {
    throw new OpenRathError(
      "invalid_argument",
      `OPENVIKING_URL must be an http or https URL such as "http://127.0.0.1:1933"; got ${JSON.stringify(fromEnv)}.`,
      { details: { variable: "OPENVIKING_URL" } },
    );
  }
  return url;
}

/** The API key: the option (checked with the others), else `OPENVIKING_API_KEY`. */
function apiKeyOf(option: string | undefined): string | undefined {
  if (option !== undefined) return option;
  const fromEnv = env("OPENVIKING_API_KEY");
  if (fromEnv !== undefined && !/^[\x21-\x7e]+$/.test(fromEnv)) {
    throw new OpenRathError(
      "invalid_argument",
      "OPENVIKING_API_KEY must be a printable ASCII string without spaces (it is sent as a header); its value is not shown.",
      { details: { variable: "OPENVIKING_API_KEY" } },
    );
  }
  return fromEnv;
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
 * @throws {OpenRathError} `invalid_argument` for a bad option; the descriptor's `parseSpec` and
 *   `open` refuse a bad spec with `invalid_spec` (a bad scope with `invalid_scope`).
 * @throws {MemoryError} from `open`: `memory_unavailable` (server unreachable),
 *   `memory_unauthorized` (key missing, wrong or ROOT), `memory_remote_error`.
 */
export function openVikingMemory(
  options: OpenVikingMemoryOptions = {},
): MemoryBackendV1<OpenVikingMemorySpec | undefined, MemoryV1> {
  const settings = checkOptions(OpenVikingMemoryOptionsSchema, options, { backend: "openVikingMemory" });
  const { requestTimeoutMs, extractionTimeoutMs, maxScan, concurrency, account, user, actorPeer, root } =
    settings;
  // `undefined` (and `null`, from JSON) is the empty spec; the scope is checked as every scope is.
  const parseSpec = (raw: unknown): ResolvedOpenVikingMemorySpec => {
    const { scope } = checkSpec(OpenVikingMemorySpecSchema, raw ?? {}, { kind: "memory", key: "openviking" });
    return { scope: scope === undefined ? normalizeScope({}) : checkScope(scope, "spec scope") };
  };
  return {
    kind: "memory",
    key: "openviking",
    specVersion: "v1",
    capabilities: { vectorSearch: false, persistence: true, sharedWriters: true },
    parseSpec,
    async open(spec: OpenVikingMemorySpec | undefined, openOptions: OpenOptions = {}) {
      const resolved = parseSpec(spec);
      // Read at open time, so registering the backend before the environment is set works.
      const url = serverUrl(settings.url);
      const apiKey = apiKeyOf(settings.apiKey);
      const fetchImpl = settings.fetch ?? globalThis.fetch;
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
        commitSessions: settings.commitSessions,
        waitForExtraction: settings.waitForExtraction,
        extractionTimeoutMs,
        pollIntervalMs: 200,
        waitForIndex: settings.waitForIndex,
        maxScan,
        concurrency,
      });
    },
  };
}

declare module "@openrath/core" {
  interface MemoryBackends {
    /** OpenViking: entries in an OpenViking context database over HTTP (`@openrath/memory-openviking`). */
    openviking: OpenVikingMemorySpec | undefined;
  }
}
