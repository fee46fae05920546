import type { OpenOptions, SandboxBackendV1, SandboxCapabilities, SandboxV1 } from "@openrath/core";
import { checkOptions, checkSpec } from "@openrath/core/backend";
import { openRemoteSandbox } from "./internal/open-remote-sandbox.js";
import { OpenSandboxOptionsSchema, OpenSandboxSpecSchema } from "./internal/schemas.js";
import type { OpenSandboxSpec, ResolvedOpenSandboxSpec } from "./internal/spec.js";

export type { OpenSandboxSpec } from "./internal/spec.js";

/** Options of {@link openSandbox}: where the OpenSandbox server is and how to talk to it. */
export interface OpenSandboxOptions {
  /**
   * The lifecycle server, as `host:port` or a URL (a path in it is kept, `/v1` is appended).
   * Default: `OPEN_SANDBOX_DOMAIN`, else `localhost:8080`.
   */
  readonly domain?: string;
  /** Sent as `OPEN-SANDBOX-API-KEY`. Default: `OPEN_SANDBOX_API_KEY`. */
  readonly apiKey?: string;
  /** Scheme for a `domain` without one, and for execd endpoints. Default `"http"`. */
  readonly protocol?: "http" | "https";
  /**
   * Reach execd through the lifecycle server (`use_server_proxy=true`) instead of directly.
   * Needed when this process cannot reach the sandboxes' network. Default false.
   */
  readonly useServerProxy?: boolean;
  /** How long `open` waits for the sandbox to run and execd to answer, in ms. Default 120000. */
  readonly readyTimeoutMs?: number;
  /** Timeout of each non-streaming HTTP request, in ms. Default 30000. */
  readonly requestTimeoutMs?: number;
  /** Sent as `X-EXECD-ACCESS-TOKEN` on every execd call, for execd started with an access token. */
  readonly execdAccessToken?: string;
  /**
   * What the capability manifest claims about the sandboxes' network. Default `"none"`, which is
   * what the package's test fake gives; a real deployment is often `"open"` (Docker's default) or
   * `"restricted"` (a `networkPolicy`): set it to what yours does.
   */
  readonly network?: SandboxCapabilities["network"];
}

/** Languages `runCode` accepts (`sh` works too, as an alias of a POSIX shell). */
const LANGUAGES = ["python", "bash"] as const;

function env(name: string): string | undefined {
  const value = typeof process !== "undefined" ? process.env[name] : undefined;
  return value === undefined || value === "" ? undefined : value;
}

/**
 * The OpenSandbox sandbox backend (key `opensandbox`): each sandbox is a container created
 * through OpenSandbox's lifecycle API and driven through its execd (commands, files, Python
 * through the code interpreter). Built on the official SDK `@alibaba-group/opensandbox`.
 *
 * @example
 * ```ts
 * import { createRegistry, Session } from "@openrath/core";
 * import { openSandbox } from "@openrath/sandbox-opensandbox";
 *
 * const registry = createRegistry({ sandboxes: [openSandbox({ domain: "localhost:8080" })] });
 * const session = Session.fromUserMessage("hi").to("opensandbox", { image: "python:3.12" }, { registry });
 * const sandbox = await session.sandbox();
 * console.log((await sandbox.exec("python3 --version")).stdout);
 * await session.release();
 * ```
 *
 * @throws {OpenRathError} `invalid_argument` for a bad option; the descriptor's `parseSpec` and
 *   `open` refuse a bad spec with `SandboxError` `invalid_spec`.
 * @throws {SandboxError} from `open`: `sandbox_unavailable` (server unreachable),
 *   `sandbox_open_failed` (create refused, provisioning failed, execd never answered), `aborted`.
 */
export function openSandbox(
  options: OpenSandboxOptions = {},
): SandboxBackendV1<OpenSandboxSpec | undefined, SandboxV1> {
  const settings = checkOptions(OpenSandboxOptionsSchema, options, {
    backend: "openSandbox",
    secrets: ["execdAccessToken"],
  });
  const { readyTimeoutMs, requestTimeoutMs, network } = settings;
  // `undefined` (and `null`, from JSON) is the empty spec.
  const parseSpec = (spec: unknown): ResolvedOpenSandboxSpec =>
    checkSpec(OpenSandboxSpecSchema, spec ?? {}, { kind: "sandbox", key: "opensandbox" });
  return {
    kind: "sandbox",
    key: "opensandbox",
    specVersion: "v1",
    capabilities: {
      streaming: true,
      stdin: false,
      network,
      isolation: "remote",
      snapshots: false,
      languages: LANGUAGES,
      // execd signals a command's process group only; the adapter then kills what carries its
      // marker, but a detached descendant with a cleared environment can outlive the command
      // (never the sandbox: close() deletes it).
      processTree: "best-effort",
    },
    parseSpec,
    async open(spec: OpenSandboxSpec | undefined, openOptions: OpenOptions = {}) {
      return openRemoteSandbox(
        parseSpec(spec),
        {
          // Read at open time, so registering the backend before the environment is set works.
          domain: settings.domain ?? env("OPEN_SANDBOX_DOMAIN"),
          apiKey: settings.apiKey ?? env("OPEN_SANDBOX_API_KEY"),
          protocol: settings.protocol,
          useServerProxy: settings.useServerProxy,
          readyTimeoutMs,
          requestTimeoutMs,
          execdAccessToken: settings.execdAccessToken,
          languages: LANGUAGES,
        },
        openOptions.signal,
      );
    },
  };
}

declare module "@openrath/core" {
  interface SandboxBackends {
    /** OpenSandbox: remote containers through the lifecycle API and execd (`@openrath/sandbox-opensandbox`). */
    opensandbox: OpenSandboxSpec | undefined;
  }
}
