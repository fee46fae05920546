import { type OpenOptions, type SandboxBackendV1, SandboxError } from "@openrath/core";
import { checkOptions, checkSpec, DEFAULT_MAX_OUTPUT_BYTES } from "@openrath/core/backend";
import { checkBubblewrap } from "./internal/check-bubblewrap.js";
import { type CommandNamespace, commandNamespace } from "./internal/command-namespace.js";
import { detectLanguages } from "./internal/detect-languages.js";
import { HostSandbox } from "./internal/host-sandbox.js";
import { SANDBOX_PATH, type SandboxTools } from "./internal/sandbox-tools.js";
import { LocalSandboxOptionsSchema, localSandboxSpecSchema } from "./internal/schemas.js";

/**
 * How commands of a local sandbox are separated from the host:
 * - `none` — host processes in the workspace directory: they see the whole file system, the
 *   host's processes and the network with the host user's rights; each command runs in a PID
 *   namespace of its own where the host allows it (so a kill reaches all it started), else in its
 *   own process group;
 * - `bubblewrap` — every command runs under [bubblewrap](https://github.com/containers/bubblewrap)
 *   in fresh namespaces: the host root read-only, the workspace writable, a private `/tmp`, no
 *   network, no capabilities.
 */
export type LocalIsolation = "none" | "bubblewrap";

/** What `session.to("local", spec)` takes. Every field is optional; `undefined` means `{}`. */
export interface LocalSandboxSpec {
  /**
   * The workspace directory on the host (relative paths resolve against the current directory).
   * Created when missing and kept on close. Without it each sandbox gets a fresh temporary
   * directory `openrath-local-XXXXXX` under `os.tmpdir()`, deleted recursively on close.
   */
  readonly workspace?: string;
  /** Variables added to the environment of every command (an exec's own `env` wins over them). */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * How commands are isolated (default: the backend's, see {@link LocalSandboxOptions.isolation}).
   * A spec may tighten the backend's isolation (`none` → `bubblewrap`), never loosen it.
   */
  readonly isolation?: LocalIsolation;
  /**
   * Whether commands start from the host's environment (default: `true` without isolation,
   * `false` under bubblewrap). With `false` they get only `PATH` (the host's), `HOME` (the
   * workspace), `LANG=C.UTF-8` and `TMPDIR` (a private directory deleted on close; `/tmp` under
   * bubblewrap), plus {@link LocalSandboxSpec.env}.
   */
  readonly inheritEnv?: boolean;
  /**
   * Default timeout of every `exec` and `runCode`, a positive number of milliseconds (default:
   * core's `DEFAULT_EXEC_TIMEOUT_MS`, 10 minutes). An exec's own `timeoutMs` wins, and only it can
   * turn the timeout off (`Infinity` or `null`).
   */
  readonly timeoutMs?: number;
}

/** Options of {@link localSandbox}. */
export interface LocalSandboxOptions {
  /**
   * The isolation of sandboxes whose spec names none, and the one the capability manifest
   * describes (default `none`: `network: "open"`, `isolation: "process"`; `bubblewrap`:
   * `network: "none"`, `isolation: "namespace"`). Specs may tighten it, never loosen it.
   */
  readonly isolation?: LocalIsolation;
  /** The bubblewrap executable (default: `bwrap` on `PATH`). */
  readonly bwrapPath?: string;
  /** Default cap on the bytes kept of each of stdout and stderr (default 1 MiB). */
  readonly maxOutputBytes?: number;
}

/**
 * The `local` sandbox backend: commands run as host processes in a workspace directory, each in
 * a PID namespace of its own where the host allows it (timeouts, aborts and `close()` kill
 * everything it started; `capabilities.processTree` says whether that holds here), optionally
 * under bubblewrap.
 * `runCode` supports the interpreters found on the host when the factory runs: `python` (python3),
 * `javascript` (this Node.js), `bash` and `sh`.
 *
 * @example
 * ```ts
 * import { createRegistry, Session } from "@openrath/core";
 * import { localSandbox } from "@openrath/sandbox-local";
 *
 * const registry = createRegistry({ sandboxes: [localSandbox({ isolation: "bubblewrap" })] });
 * const session = Session.fromUserMessage("hi").to("local", { timeoutMs: 30_000 }, { registry });
 * const sandbox = await session.sandbox();
 * console.log((await sandbox.exec("uname -a")).stdout);
 * await session.release();
 * ```
 *
 * @throws {OpenRathError} `invalid_argument` for a bad option; the descriptor's `parseSpec` and
 *   `open` refuse a bad spec with `SandboxError` `invalid_spec`.
 */
export function localSandbox(
  options: LocalSandboxOptions = {},
): SandboxBackendV1<LocalSandboxSpec | undefined> {
  return localSandboxWith(options, commandNamespace);
}

/**
 * {@link localSandbox} with the probe of unisolated commands' PID namespaces given (tests use it
 * to run the fallback where namespaces work). Not part of the package's API.
 *
 * @internal
 */
export function localSandboxWith(
  options: LocalSandboxOptions,
  findCommandNamespace: () => CommandNamespace | undefined,
): SandboxBackendV1<LocalSandboxSpec | undefined> {
  const settings = checkOptions(LocalSandboxOptionsSchema, options, { backend: "localSandbox" });
  const interpreters = detectLanguages(process.env.PATH ?? "");
  // Inside a bubblewrap sandbox only the system directories (and this Node.js) are visible.
  const isolatedInterpreters = detectLanguages(SANDBOX_PATH);
  const languages = Object.keys(settings.isolation === "bubblewrap" ? isolatedInterpreters : interpreters);
  let bubblewrap: Promise<SandboxTools> | undefined;
  const ensureBubblewrap = (): Promise<SandboxTools> => {
    bubblewrap ??= checkBubblewrap(settings.bwrapPath);
    // A failed probe is not cached: bubblewrap may be installed meanwhile.
    bubblewrap.catch(() => {
      bubblewrap = undefined;
    });
    return bubblewrap;
  };
  const specSchema = localSandboxSpecSchema(settings.isolation);
  // `undefined` (and `null`, from JSON) is the empty spec.
  const parseSpec = (spec: unknown): LocalSandboxSpec =>
    checkSpec(specSchema, spec ?? {}, { kind: "sandbox", key: "local" });
  return {
    kind: "sandbox",
    key: "local",
    specVersion: "v1",
    capabilities: {
      streaming: true,
      stdin: true,
      network: settings.isolation === "bubblewrap" ? "none" : "open",
      isolation: settings.isolation === "bubblewrap" ? "namespace" : "process",
      snapshots: false,
      languages,
      // Every command has a PID namespace of its own: always under bubblewrap, unisolated where the
      // host allows it (probed on first use, see ADR 0023); otherwise a process can escape its group.
      get processTree() {
        return settings.isolation === "bubblewrap" || findCommandNamespace() ? "contained" : "best-effort";
      },
    },
    parseSpec,
    async open(rawSpec: LocalSandboxSpec | undefined, openOptions: OpenOptions = {}) {
      const spec = parseSpec(rawSpec);
      const signal = openOptions.signal;
      if (signal?.aborted) throw abortedOpen();
      const tools = spec.isolation === "bubblewrap" ? await ensureBubblewrap() : undefined;
      const namespace = spec.isolation === "bubblewrap" ? undefined : findCommandNamespace();
      if (signal?.aborted) throw abortedOpen();
      return HostSandbox.open({
        spec,
        bwrapPath: settings.bwrapPath,
        maxOutputBytes: settings.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
        interpreters,
        isolatedInterpreters: {
          ...isolatedInterpreters,
          ...(tools ? { javascript: { ...isolatedInterpreters.javascript!, command: tools.node } } : {}),
        },
        ...(tools ? { tools } : {}),
        ...(namespace ? { commandNamespace: namespace } : {}),
      });
    },
  };
}

function abortedOpen(): SandboxError {
  return new SandboxError("aborted", "Opening the local sandbox was aborted by the caller's AbortSignal.");
}

declare module "@openrath/core" {
  interface SandboxBackends {
    /** Host processes in a workspace directory (`@openrath/sandbox-local`). */
    local: LocalSandboxSpec | undefined;
  }
}
