import { OpenRathError, type OpenRathErrorOptions } from "./errors.js";

/**
 * Error codes of the sandbox plane:
 * - `not_placed` — tools asked for a sandbox on an unplaced session;
 * - `sandbox_closed` — the sandbox (or this session's hold on it) was closed;
 * - `sandbox_unavailable` — the backend cannot be reached (dead Docker daemon, server down);
 * - `sandbox_open_failed` — the backend answered but could not create the sandbox;
 * - `sandbox_remote_error` — the remote service failed a request (a 5xx, an error body);
 * - `sandbox_transport` — a connection or stream broke mid-operation;
 * - `exec_timeout` — a command or code run outlived its timeout (its process tree was killed);
 * - `aborted` — the caller's AbortSignal fired (the process tree was killed);
 * - `path_outside_workspace` — a path (through `..`, an absolute path or a symlink) leaves the workspace;
 * - `file_not_found`, `not_a_file`, `not_a_directory` — file operations on the wrong thing;
 * - `binary_file` — a file that is not UTF-8 text was read as text;
 * - `unsupported_language`, `unsupported` — a capability the backend does not declare.
 */
export type SandboxErrorCode =
  | "invalid_argument"
  | "not_placed"
  | "sandbox_closed"
  | "sandbox_unavailable"
  | "sandbox_open_failed"
  | "sandbox_remote_error"
  | "sandbox_transport"
  | "exec_timeout"
  | "aborted"
  | "path_outside_workspace"
  | "file_not_found"
  | "not_a_file"
  | "not_a_directory"
  | "binary_file"
  | "unsupported_language"
  | "unsupported"
  | "invalid_spec";

/** An error raised by a sandbox or a sandbox backend. */
export class SandboxError extends OpenRathError {
  declare readonly code: SandboxErrorCode;
  constructor(code: SandboxErrorCode, message: string, options: OpenRathErrorOptions = {}) {
    super(code, message, options);
  }
}

/** What a sandbox backend can do. Core uses it to fail fast; the conformance suite checks every claim. */
export interface SandboxCapabilities {
  /** Whether `exec` delivers output through `onStdout`/`onStderr` while the command still runs. */
  readonly streaming: boolean;
  /** Whether `exec` accepts `stdin`. */
  readonly stdin: boolean;
  /** Network reachable from inside: `none`, a restricted allow-list, or open. */
  readonly network: "none" | "restricted" | "open";
  /** What separates the sandbox from the host. */
  readonly isolation: "process" | "namespace" | "container" | "microvm" | "remote";
  /** Whether the backend can snapshot and restore a workspace. */
  readonly snapshots: boolean;
  /** Languages `runCode` accepts, such as `["python", "javascript", "bash"]`. */
  readonly languages: readonly string[];
  /**
   * How far a timeout, an abort and `close()` reach into a command's descendants:
   * - `contained` — every descendant dies, including ones that start a new session, clear their
   *   environment and ignore SIGTERM: the mode holds each command in a PID namespace, a cgroup or
   *   an equivalent it cannot leave, by construction;
   * - `best-effort` (also what a manifest without this field means) — descendants that stay in the
   *   command's process group, session or environment die; one that detaches itself (`setsid`
   *   after a double fork, with a cleared environment) may outlive the command, though `close()`
   *   of a backend that owns the whole machine (a container) still ends it.
   *
   * The conformance suite plants such descendants and checks the claim in the process table.
   */
  readonly processTree?: "contained" | "best-effort";
}

/** Options of {@link SandboxV1.exec}. */
export interface ExecOptions {
  /** Working directory, relative to the workspace root (default: the root). Confined to the workspace. */
  readonly cwd?: string;
  /** Variables added to (and overriding) the sandbox's environment. */
  readonly env?: Readonly<Record<string, string>>;
  /** Bytes or UTF-8 text written to the command's standard input, which is then closed. */
  readonly stdin?: string | Uint8Array;
  /**
   * Kill the whole process tree after this many milliseconds and throw `exec_timeout`. Default:
   * the sandbox spec's `timeoutMs`, else {@link DEFAULT_EXEC_TIMEOUT_MS}. `Infinity` turns the
   * timeout off for this command (a long-lived server, a watcher): an explicit opt-out.
   */
  readonly timeoutMs?: number;
  /** Kill the whole process tree when this fires and throw `aborted`. */
  readonly signal?: AbortSignal;
  /** Receives standard output as it arrives (UTF-8 text; chunk boundaries are arbitrary). */
  readonly onStdout?: (text: string) => void;
  /** Receives standard error as it arrives. */
  readonly onStderr?: (text: string) => void;
  /** Most bytes kept of each of stdout and stderr (default {@link DEFAULT_MAX_OUTPUT_BYTES}). */
  readonly maxOutputBytes?: number;
}

/** The result of a command that ran to its end (a non-zero exit code is a result, not an error). */
export interface ExecResult {
  /** The exit code; `128 + n` when the command died of signal `n` on its own. */
  readonly exitCode: number;
  /** Standard output as UTF-8 text; ends with {@link truncationMarker} when capped. */
  readonly stdout: string;
  /** Standard error as UTF-8 text; ends with {@link truncationMarker} when capped. */
  readonly stderr: string;
  /** Whether stdout or stderr was cut at `maxOutputBytes`. */
  readonly truncated: boolean;
  /** Wall time in milliseconds. */
  readonly durationMs: number;
}

/** One entry of {@link SandboxV1.listFiles}. */
export interface FileEntry {
  /** Base name. */
  readonly name: string;
  /** Path relative to the workspace root, `/`-separated. */
  readonly path: string;
  readonly type: "file" | "directory" | "symlink" | "other";
  /** Size in bytes (0 for directories where the backend does not report it). */
  readonly size: number;
}

/**
 * An open sandbox: a workspace where commands and code run and files live. Every path is relative
 * to the workspace root (an absolute path must point inside it); every method throws
 * {@link SandboxError} with a stable code.
 */
export interface SandboxV1 {
  /** Backend-specific id (a directory, a container id, a remote sandbox id). */
  readonly id: string;
  /** Absolute path of the workspace root as commands inside the sandbox see it. */
  readonly workspace: string;
  /**
   * Runs a command: an argv array runs directly, a string runs through `/bin/sh -c`.
   *
   * Without `stdin` the command's standard input is empty. Output over `maxOutputBytes` is cut
   * (the command keeps running); `env` applies to this call only.
   *
   * @throws {SandboxError} `exec_timeout` or `aborted` (after killing the process tree; the error's
   *   `details.stdout` and `details.stderr` hold the output so far), `unsupported` for `stdin` where
   *   the backend cannot take it, `sandbox_closed`, `path_outside_workspace` or `file_not_found`
   *   for a bad `cwd`. An already-aborted signal rejects before the command starts.
   */
  exec(command: string | readonly string[], options?: ExecOptions): Promise<ExecResult>;
  /** Reads a UTF-8 text file. @throws `file_not_found`, `not_a_file`, `binary_file`, `path_outside_workspace` */
  readFile(path: string, options?: { readonly encoding?: "utf8" }): Promise<string>;
  /** Reads a file's bytes. @throws `file_not_found`, `not_a_file`, `path_outside_workspace` */
  readFile(path: string, options: { readonly encoding: "bytes" }): Promise<Uint8Array>;
  /** Writes a file, creating parent directories and replacing any file there. Returns bytes written. */
  writeFile(path: string, data: string | Uint8Array): Promise<{ readonly bytesWritten: number }>;
  /** Lists a directory (default: the root), sorted by name. @throws `file_not_found`, `not_a_directory` */
  listFiles(path?: string, options?: { readonly recursive?: boolean }): Promise<FileEntry[]>;
  /** Whether a path exists inside the workspace. A path that escapes it throws `path_outside_workspace`. */
  exists(path: string): Promise<boolean>;
  /**
   * Runs a snippet of code in one of the capability manifest's `languages`. Output and exit code as
   * for {@link SandboxV1.exec}; an uncaught error shows in `stderr` with a non-zero exit code.
   *
   * @throws {SandboxError} `unsupported_language`, `exec_timeout`, `aborted`.
   */
  runCode(code: string, language: string, options?: Omit<ExecOptions, "stdin">): Promise<ExecResult>;
  /** Releases everything the sandbox holds (processes, containers, temporary directories). Idempotent. */
  close(): Promise<void>;
}

/** Bytes of stdout, and of stderr, that `exec` keeps by default: 1 MiB each. */
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;

/**
 * The timeout of a command whose exec options and sandbox spec set none: 10 minutes, so a command
 * that never exits never hangs a run. Pass `timeoutMs: Infinity` (or `null` in a spec, which is
 * what `Infinity` becomes in JSON) to opt out.
 */
export const DEFAULT_EXEC_TIMEOUT_MS = 10 * 60 * 1000;

/** The longest delay `setTimeout` honours; longer timeouts are treated as none. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Checks one timeout setting: `undefined` (not set here), `null` or `Infinity` (no timeout), or a
 * positive number of milliseconds. Returns it normalized (`Infinity` for "none").
 *
 * @param where - names the setting in the error, such as `exec timeoutMs`.
 * @throws {SandboxError} `invalid_argument` for anything else.
 */
export function checkTimeout(value: unknown, where = "timeoutMs"): number | undefined {
  if (value === undefined) return undefined;
  if (value === null || value === Number.POSITIVE_INFINITY) return Number.POSITIVE_INFINITY;
  if (typeof value !== "number" || Number.isNaN(value) || value <= 0) {
    throw new SandboxError(
      "invalid_argument",
      `${where} must be a positive number of milliseconds, or Infinity for no timeout; got ${JSON.stringify(value) ?? String(value)}.`,
      { details: { timeoutMs: value } },
    );
  }
  return value > MAX_TIMER_MS ? Number.POSITIVE_INFINITY : value;
}

/**
 * The timeout a command runs with: the exec's own `timeoutMs`, else the spec's, else
 * `fallback` ({@link DEFAULT_EXEC_TIMEOUT_MS}). `Infinity` means none. Every backend calls this,
 * so the layering and the opt-out are the same everywhere.
 *
 * @throws {SandboxError} `invalid_argument` for a bad exec value.
 */
export function resolveExecTimeout(
  execValue: unknown,
  specValue?: number | null,
  fallback: number = DEFAULT_EXEC_TIMEOUT_MS,
): number {
  return (
    checkTimeout(execValue, "exec timeoutMs") ?? checkTimeout(specValue, "the spec's timeoutMs") ?? fallback
  );
}

/** The line appended to capped output. */
export function truncationMarker(omittedBytes: number): string {
  return `\n[output truncated: ${omittedBytes} more bytes not shown]\n`;
}

/**
 * Collects one output stream up to a byte cap, decoding UTF-8 across chunk boundaries and
 * forwarding text to a streaming callback. The callback is capped like the result: it receives
 * the kept bytes only and, when output was cut, the same {@link truncationMarker} at the end, so
 * what it received concatenates to {@link OutputBuffer.text}. Backends share it so truncation
 * looks the same everywhere.
 */
export class OutputBuffer {
  private readonly parts: Uint8Array[] = [];
  private kept = 0;
  private omitted = 0;
  private finished: string | undefined;
  private readonly decoder = new TextDecoder("utf-8");

  constructor(
    private readonly maxBytes: number = DEFAULT_MAX_OUTPUT_BYTES,
    private readonly onText?: (text: string) => void,
  ) {}

  /** Adds bytes (or text) as they arrive. Bytes past the cap are counted, not kept. */
  push(data: Uint8Array | string): void {
    if (this.finished !== undefined) return;
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    const room = Math.max(this.maxBytes - this.kept, 0);
    const keep = room >= bytes.length ? bytes : bytes.subarray(0, room);
    if (keep.length > 0) {
      // Copied: the caller may reuse its buffer after this call.
      this.parts.push(keep.slice());
      this.kept += keep.length;
      if (this.onText) {
        const text = this.decoder.decode(keep, { stream: true });
        if (text) this.onText(text);
      }
    }
    this.omitted += bytes.length - keep.length;
  }

  /**
   * Counts `bytes` that arrived past the cap without handing over their content (a backend that
   * caps at the source, inside the sandbox, reports what it dropped this way).
   */
  skip(bytes: number): void {
    if (this.finished === undefined && Number.isSafeInteger(bytes) && bytes > 0) this.omitted += bytes;
  }

  /** Whether anything was cut. */
  get truncated(): boolean {
    return this.omitted > 0;
  }

  /** Bytes received past the cap so far. */
  get omittedBytes(): number {
    return this.omitted;
  }

  /**
   * The kept output as text, with the truncation marker when capped. The first call ends the
   * stream: it flushes the decoder into the callback (and the marker after it); later pushes are
   * ignored and later calls return the same text.
   */
  text(): string {
    if (this.finished !== undefined) return this.finished;
    if (this.onText) {
      const rest = this.decoder.decode();
      if (rest) this.onText(rest);
      if (this.omitted > 0) this.onText(truncationMarker(this.omitted));
    }
    const all = new Uint8Array(this.kept);
    let at = 0;
    for (const part of this.parts) {
      all.set(part, at);
      at += part.length;
    }
    // A cut in the middle of a multi-byte character leaves a replacement character; that is fine.
    const text = new TextDecoder("utf-8").decode(all);
    this.finished = this.omitted > 0 ? text + truncationMarker(this.omitted) : text;
    return this.finished;
  }
}

/**
 * Decodes bytes read as text, refusing content that is not UTF-8 text (invalid sequences or NUL
 * bytes).
 *
 * @throws {SandboxError} `binary_file`.
 */
export function decodeTextFile(bytes: Uint8Array, path: string): string {
  try {
    if (bytes.includes(0)) throw new Error("NUL byte");
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new SandboxError(
      "binary_file",
      `${path} is not UTF-8 text (${bytes.length} bytes). Read it with { encoding: "bytes" }.`,
      { details: { path, size: bytes.length } },
    );
  }
}

/**
 * Normalizes a path against the workspace and refuses one that leaves it. Returns the path
 * relative to the workspace root, `/`-separated, `.` for the root itself. Relative paths resolve
 * against the root; an absolute path must lie under `workspace`. Symlinks are the backend's to
 * check, since only it can see the file system.
 *
 * @param workspace - the absolute workspace root as the sandbox sees it (such as `/workspace`).
 * @throws {SandboxError} `path_outside_workspace`; `invalid_argument` for a non-string or a NUL
 *   byte (a `SandboxError` too, like every sandbox misuse).
 */
export function confinePath(path: string, workspace: string): string {
  if (typeof path !== "string" || path.includes("\0")) {
    throw new SandboxError(
      "invalid_argument",
      `A sandbox path must be a string without NUL bytes, got ${JSON.stringify(path)}.`,
      {
        details: { path },
      },
    );
  }
  const root = workspace.replace(/\/+$/, "") || "/";
  let rest = path;
  if (rest.startsWith("/")) {
    if (rest !== root && !rest.startsWith(root === "/" ? "/" : `${root}/`)) throw outside(path, workspace);
    rest = rest.slice(root.length);
  }
  const out: string[] = [];
  for (const part of rest.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.length === 0) throw outside(path, workspace);
      out.pop();
    } else {
      out.push(part);
    }
  }
  return out.length === 0 ? "." : out.join("/");
}

/** The `path_outside_workspace` error for `path`. */
export function outside(path: string, workspace: string): SandboxError {
  return new SandboxError(
    "path_outside_workspace",
    `Path ${JSON.stringify(path)} leaves the sandbox workspace ${workspace}. Use a path inside it, relative to the workspace root.`,
    { details: { path, workspace } },
  );
}

/**
 * Checks an exec `env` map: names non-empty without `=` or NUL, values strings without NUL.
 * Returns it as a plain record (empty when absent).
 *
 * @throws {SandboxError} `invalid_argument` naming the bad variable.
 */
export function checkEnv(env: unknown): Record<string, string> {
  if (env === undefined) return {};
  if (typeof env !== "object" || env === null || Array.isArray(env)) {
    throw new SandboxError(
      "invalid_argument",
      `exec env must be an object of strings, got ${JSON.stringify(env)}.`,
      {
        details: { env },
      },
    );
  }
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (
      name === "" ||
      name.includes("=") ||
      name.includes("\0") ||
      typeof value !== "string" ||
      value.includes("\0")
    ) {
      throw new SandboxError(
        "invalid_argument",
        `Invalid environment variable ${JSON.stringify(name)}: names must be non-empty without "=" or NUL, values strings without NUL.`,
        { details: { name } },
      );
    }
    out[name] = value;
  }
  return out;
}
