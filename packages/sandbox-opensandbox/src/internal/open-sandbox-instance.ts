import {
  type ExecOptions,
  type ExecResult,
  type FileEntry,
  OpenRathError,
  SandboxError,
  type SandboxV1,
} from "@openrath/core";
import {
  checkEnv,
  confinePath,
  DEFAULT_MAX_OUTPUT_BYTES,
  decodeTextFile,
  OutputBuffer,
  outside,
} from "@openrath/core/backend";
import { explain, failureDetails, isUnreachable, remoteFailure, toSandboxError } from "./errors.js";
import { type ExecdEvent, parseEventStream } from "./event-stream.js";
import type { ConnectionConfig, ExecdStack, Sandboxes } from "./sdk.js";
import { shellJoin, shellQuote } from "./shell.js";
import { sleep, within } from "./sleep.js";
import type { ResolvedOpenSandboxSpec } from "./spec.js";

/** Everything an open sandbox talks through. */
export interface InstanceParts {
  readonly id: string;
  readonly spec: ResolvedOpenSandboxSpec;
  readonly config: ConnectionConfig;
  readonly sandboxes: Sandboxes;
  readonly execd: ExecdStack;
  /** `<scheme>://<endpoint>` of execd, path prefix included, no trailing slash. */
  readonly execdUrl: string;
  /** Headers of every execd call: the lifecycle's plus the endpoint's (plus an access token). */
  readonly execdHeaders: Readonly<Record<string, string>>;
  /** Languages `runCode` accepts (the manifest's). */
  readonly languages: readonly string[];
}

/** Options of one command run through `POST /command` (or a cell through `POST /code`). */
interface RunOptions {
  readonly cwd: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  readonly onStdout?: (text: string) => void;
  readonly onStderr?: (text: string) => void;
  readonly maxOutputBytes?: number;
  /** For messages: "Command `ls`", "Python code". */
  readonly what: string;
}

type Stop = "timeout" | "aborted" | "closed";

/** Go's `signal.String()` names, as execd reports a killed command (`signal: killed`). */
const SIGNALS: Record<string, number> = {
  hangup: 1,
  interrupt: 2,
  quit: 3,
  "illegal instruction": 4,
  "trace/breakpoint trap": 5,
  aborted: 6,
  "bus error": 7,
  "floating point exception": 8,
  killed: 9,
  "user defined signal 1": 10,
  "segmentation fault": 11,
  "user defined signal 2": 12,
  "broken pipe": 13,
  "alarm clock": 14,
  terminated: 15,
};

/** How long to wait, after an interrupt, for the stream's terminal event (execd escalates to SIGKILL after 3 s). */
const INTERRUPT_GRACE_MS = 5000;
/** How long to wait for a command's `init` (its id) before giving up on interrupting it. */
const INIT_WAIT_MS = 2000;
/** Extra time given to execd's own timeout, the backstop for a client that died. */
const SERVER_TIMEOUT_SLACK_MS = 5000;
/** How long `runCode` waits for its context's deletion before returning anyway. */
const CONTEXT_DELETE_WAIT_MS = 2000;
/** `depth` of a recursive `/directories/list`. */
const RECURSIVE_DEPTH = 4096;

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

function stripAnsi(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escapes start with ESC.
  return text.replace(/\x1b\[[0-9;]*[A-Za-z]/g, "");
}

function preview(command: string): string {
  const line = command.replace(/\s+/g, " ").trim();
  return line.length > 60 ? `${line.slice(0, 57)}...` : line;
}

/**
 * One OpenSandbox sandbox as a {@link SandboxV1}: commands and files through its execd, lifecycle
 * (renewal, deletion) through the lifecycle API. Created by the backend's `open`.
 */
export class OpenSandboxInstance implements SandboxV1 {
  readonly id: string;
  readonly workspace: string;
  /** The workspace with symlinks resolved, as `realpath` reports it inside the sandbox. */
  private realWorkspace: string;
  private readonly lifetime = new AbortController();
  private closing: Promise<void> | undefined;
  private closed = false;
  private renewTimer: NodeJS.Timeout | undefined;
  private renewing = false;
  /** The last expiry the server confirmed. */
  expiresAt: Date | undefined;
  /** The last renewal failure, if the last renewal failed. */
  renewalError: SandboxError | undefined;

  constructor(private readonly parts: InstanceParts) {
    this.id = parts.id;
    this.workspace = parts.spec.workspace;
    this.realWorkspace = parts.spec.workspace;
  }

  /** Creates the workspace and learns its real path. Part of `open`. */
  async init(signal?: AbortSignal): Promise<void> {
    const ws = shellQuote(this.workspace);
    const result = await this.runCommand(`( mkdir -p -- ${ws} && ${realpathOf(ws)} )`, {
      cwd: "/",
      timeoutMs: 60_000,
      ...(signal ? { signal } : {}),
      what: "Creating the workspace",
    });
    const real = result.stdout.replace(/\n$/, "");
    if (result.exitCode !== 0 || !real.startsWith("/")) {
      throw new SandboxError(
        "sandbox_open_failed",
        `Could not create the workspace ${this.workspace} in OpenSandbox sandbox ${this.id} (exit code ${result.exitCode}): ${result.stderr.trim() || "no output"}. Pick a writable "workspace" in the spec.`,
        {
          details: {
            id: this.id,
            workspace: this.workspace,
            exitCode: result.exitCode,
            stderr: result.stderr,
          },
        },
      );
    }
    this.realWorkspace = real;
  }

  /** Starts pushing the expiry `timeoutSeconds` ahead every `renewEverySeconds`. */
  startRenewal(): void {
    const every = this.parts.spec.renewEverySeconds * 1000;
    this.renewTimer = setInterval(() => void this.renew(), every);
    this.renewTimer.unref();
  }

  /** Renews the expiry once (the timer calls it; failures are kept in {@link renewalError}). */
  async renew(): Promise<void> {
    if (this.renewing || this.closed) return;
    this.renewing = true;
    try {
      const expiresAt = new Date(Date.now() + this.parts.spec.timeoutSeconds * 1000).toISOString();
      const answer = await this.parts.sandboxes.renewSandboxExpiration(this.id, { expiresAt });
      this.expiresAt = answer.expiresAt instanceof Date ? answer.expiresAt : new Date(expiresAt);
      this.renewalError = undefined;
    } catch (error) {
      this.renewalError = toSandboxError(error, `Renewing OpenSandbox sandbox ${this.id}`);
    } finally {
      this.renewing = false;
    }
  }

  async exec(command: string | readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
    this.assertOpen();
    if (options.stdin !== undefined) {
      throw new SandboxError(
        "unsupported",
        "The opensandbox backend cannot pass stdin to a command: execd has no stdin channel (capabilities.stdin is false). Write the input to a file and redirect it, e.g. `cmd < input.txt`.",
        { details: { capability: "stdin" } },
      );
    }
    let line: string;
    if (typeof command === "string") {
      line = command.trim() === "" ? ":" : command;
    } else {
      if (!Array.isArray(command) || command.length === 0 || command.some((w) => typeof w !== "string")) {
        throw new OpenRathError(
          "invalid_argument",
          `exec takes a shell string or a non-empty array of strings (argv); got ${JSON.stringify(command)}.`,
          { details: { command } },
        );
      }
      line = shellJoin(command);
    }
    const picked = pick(options);
    const env = this.checkEnv(options.env);
    if (options.signal?.aborted) throw aborted(`Command \`${preview(line)}\``, options.signal);
    const cwd = options.cwd === undefined ? this.workspace : await this.directory(options.cwd);
    return this.runCommand(`/bin/sh -c ${shellQuote(line)}`, {
      cwd,
      ...(env ? { env } : {}),
      ...picked,
      what: `Command \`${preview(typeof command === "string" ? command : line)}\``,
    });
  }

  async readFile(path: string, options?: { readonly encoding?: "utf8" }): Promise<string>;
  async readFile(path: string, options: { readonly encoding: "bytes" }): Promise<Uint8Array>;
  async readFile(
    path: string,
    options: { readonly encoding?: "utf8" | "bytes" } = {},
  ): Promise<string | Uint8Array> {
    this.assertOpen();
    const rel = confinePath(path, this.workspace);
    const target = await this.resolve(rel, path);
    if (target.type === "missing") throw notFound(path, this.workspace);
    if (target.type !== "file") {
      throw new SandboxError(
        "not_a_file",
        `Cannot read ${path}: it is a ${target.type === "directory" ? "directory" : "special file"}, not a regular file. Use listFiles for directories.`,
        { details: { path, type: target.type } },
      );
    }
    let bytes: Uint8Array;
    try {
      bytes = await this.parts.execd.files.readBytes(target.path);
    } catch (error) {
      if (remoteFailure(error).status === 404) throw notFound(path, this.workspace);
      throw this.failure(error, `Reading ${path}`);
    }
    return options.encoding === "bytes" ? bytes : decodeTextFile(bytes, path);
  }

  async writeFile(path: string, data: string | Uint8Array): Promise<{ readonly bytesWritten: number }> {
    this.assertOpen();
    if (typeof data !== "string" && !(data instanceof Uint8Array)) {
      throw new OpenRathError(
        "invalid_argument",
        `writeFile takes a string or a Uint8Array; got ${data === null ? "null" : typeof data}.`,
        { details: { path } },
      );
    }
    const rel = confinePath(path, this.workspace);
    if (rel === ".") throw notAFile(path, "the workspace root is a directory");
    const target = await this.resolve(rel, path);
    if (target.type === "directory") throw notAFile(path, "it is a directory");
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    try {
      await this.parts.execd.files.writeFiles([{ path: target.path, data: bytes }]);
    } catch (error) {
      const failure = remoteFailure(error);
      if (/not a directory/i.test(failure.message)) {
        throw new SandboxError(
          "not_a_directory",
          `Cannot write ${path}: one of its parent paths is a file, not a directory.`,
          { cause: error, details: { path } },
        );
      }
      throw this.failure(error, `Writing ${path}`);
    }
    return { bytesWritten: bytes.length };
  }

  async listFiles(path = ".", options: { readonly recursive?: boolean } = {}): Promise<FileEntry[]> {
    this.assertOpen();
    const rel = confinePath(path, this.workspace);
    const target =
      rel === "." ? { path: this.realWorkspace, type: "directory" } : await this.resolve(rel, path);
    if (target.type === "missing") throw notFound(path, this.workspace);
    if (target.type !== "directory") {
      throw new SandboxError("not_a_directory", `Cannot list ${path}: it is not a directory.`, {
        details: { path, type: target.type },
      });
    }
    const recursive = options.recursive === true;
    const prefix = rel === "." ? "" : `${rel}/`;
    const entries = new Map<string, FileEntry>();
    const add = (relative: string, type: FileEntry["type"], size: number) => {
      const name = relative.slice(relative.lastIndexOf("/") + 1);
      entries.set(relative, { name, path: prefix + relative, type, size });
    };
    const under = (full: string) =>
      full.startsWith(`${target.path}/`) ? full.slice(target.path.length + 1) : undefined;
    try {
      const infos = await this.parts.execd.files.listDirectory({
        path: target.path,
        depth: recursive ? RECURSIVE_DEPTH : 1,
      });
      for (const info of infos) {
        const relative = under(info.path);
        if (relative) add(relative, entryType(info.type), info.type === "directory" ? 0 : (info.size ?? 0));
      }
    } catch (error) {
      const failure = remoteFailure(error);
      if (failure.status === 404 && failure.code === "FILE_NOT_FOUND") throw notFound(path, this.workspace);
      if (failure.status !== 404) throw this.failure(error, `Listing ${path}`);
      // execd before v1.0.19 has no /directories/list (gin answers its plain 404): search instead.
      // Search reports files only, so directories are inferred from file paths and empty ones are missed.
      let files: { path: string; type?: string; size?: number }[];
      try {
        files = await this.parts.execd.files.search({ path: target.path, pattern: "**" });
      } catch (searchError) {
        if (remoteFailure(searchError).status === 404) throw notFound(path, this.workspace);
        throw this.failure(searchError, `Listing ${path}`);
      }
      for (const file of files) {
        const relative = under(file.path);
        if (!relative) continue;
        const parts = relative.split("/");
        if (!recursive && parts.length > 1) {
          add(parts[0]!, "directory", 0);
          continue;
        }
        for (let i = 1; i < parts.length; i++) add(parts.slice(0, i).join("/"), "directory", 0);
        add(relative, entryType(file.type), file.size ?? 0);
      }
    }
    return [...entries.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  async exists(path: string): Promise<boolean> {
    this.assertOpen();
    const rel = confinePath(path, this.workspace);
    const target = rel === "." ? { path: this.realWorkspace } : await this.resolve(rel, path);
    try {
      await this.parts.execd.files.getFileInfo([target.path]);
      return true;
    } catch (error) {
      if (remoteFailure(error).status === 404) return false;
      throw this.failure(error, `Checking ${path}`);
    }
  }

  async runCode(
    code: string,
    language: string,
    options: Omit<ExecOptions, "stdin"> = {},
  ): Promise<ExecResult> {
    this.assertOpen();
    if ((options as ExecOptions).stdin !== undefined) {
      throw new SandboxError(
        "unsupported",
        "runCode takes no stdin on the opensandbox backend (capabilities.stdin is false).",
        {
          details: { capability: "stdin" },
        },
      );
    }
    const lang = typeof language === "string" ? language.toLowerCase() : "";
    if (!["python", "bash", "sh"].includes(lang)) {
      throw new SandboxError(
        "unsupported_language",
        `The opensandbox backend cannot run ${JSON.stringify(language)} code. Supported languages: ${this.parts.languages.join(", ")}.`,
        { details: { language, supported: this.parts.languages } },
      );
    }
    if (typeof code !== "string") {
      throw new OpenRathError("invalid_argument", `runCode takes the code as a string; got ${typeof code}.`, {
        details: {},
      });
    }
    const picked = pick(options);
    const env = this.checkEnv(options.env);
    const what = `${lang === "python" ? "Python" : lang} code`;
    if (options.signal?.aborted) throw aborted(what, options.signal);
    const run: RunOptions = {
      cwd: options.cwd === undefined ? this.workspace : await this.directory(options.cwd),
      ...(env ? { env } : {}),
      ...picked,
      what,
    };
    if (lang === "bash") return this.runCommand(`bash -c ${shellQuote(code)}`, run);
    if (lang === "sh") return this.runCommand(`/bin/sh -c ${shellQuote(code)}`, run);
    if (this.parts.spec.codeInterpreter) return this.runPython(code, run);
    return this.runCommand(`python3 -c ${shellQuote(code)}`, run);
  }

  /** Deletes the sandbox (retrying; a 404 means it is already gone) and frees the HTTP agent. */
  close(): Promise<void> {
    if (!this.closing) {
      this.closed = true;
      if (this.renewTimer) clearInterval(this.renewTimer);
      this.lifetime.abort();
      const closing = deleteSandbox(this.parts.sandboxes, this.id).then(
        () => this.parts.config.closeTransport(),
        (error: unknown) => {
          // Let a later close() try again.
          if (this.closing === closing) this.closing = undefined;
          throw error;
        },
      );
      this.closing = closing;
    }
    return this.closing;
  }

  private assertOpen(): void {
    if (this.closed) {
      throw new SandboxError("sandbox_closed", `OpenSandbox sandbox ${this.id} was closed.`, {
        details: { id: this.id },
      });
    }
  }

  private checkEnv(env: Readonly<Record<string, string>> | undefined): Record<string, string> | undefined {
    return env === undefined ? undefined : checkEnv(env);
  }

  private failure(error: unknown, what: string): SandboxError {
    if (this.closed) {
      return new SandboxError(
        "sandbox_closed",
        `${what} failed: OpenSandbox sandbox ${this.id} was closed.`,
        {
          cause: error,
          details: { id: this.id },
        },
      );
    }
    const failure = remoteFailure(error);
    if (isUnreachable(failure)) {
      return new SandboxError(
        "sandbox_unavailable",
        `${what} failed: execd of OpenSandbox sandbox ${this.id} at ${this.parts.execdUrl} could not be reached (${explain(failure)}). The sandbox may have expired or been deleted on the server.`,
        { cause: error, details: { id: this.id, ...failureDetails(failure) } },
      );
    }
    return toSandboxError(error, what, "sandbox_remote_error", { id: this.id });
  }

  /** The working directory for `cwd`, confined and checked to be a directory. */
  private async directory(cwd: string): Promise<string> {
    const rel = confinePath(cwd, this.workspace);
    if (rel === ".") return this.workspace;
    const target = await this.resolve(rel, cwd);
    if (target.type === "missing") {
      throw new SandboxError(
        "file_not_found",
        `The working directory ${cwd} does not exist in the workspace ${this.workspace}. Create it first (writeFile creates parents) or pass an existing cwd.`,
        { details: { path: cwd } },
      );
    }
    if (target.type !== "directory") {
      throw new SandboxError("not_a_directory", `The working directory ${cwd} is not a directory.`, {
        details: { path: cwd },
      });
    }
    return target.path;
  }

  /**
   * Resolves a confined relative path inside the sandbox (`realpath -m`: every symlink, existing
   * or not) and refuses one that leaves the workspace. Only the sandbox can see its symlinks, so
   * this costs one command; the file calls then use the resolved path.
   */
  private async resolve(rel: string, original: string): Promise<{ path: string; type: string }> {
    const abs = shellQuote(`${this.workspace}/${rel}`);
    const script =
      `p=$(${realpathOf(abs)}) || exit 3; ` +
      `if [ -d "$p" ]; then t=directory; elif [ -f "$p" ]; then t=file; elif [ -e "$p" ]; then t=other; else t=missing; fi; ` +
      `printf '%s\\n%s\\n' "$t" "$p"`;
    const result = await this.runCommand(`( ${script} )`, {
      cwd: "/",
      timeoutMs: 60_000,
      what: `Resolving ${original}`,
    });
    const newline = result.stdout.indexOf("\n");
    const type = result.stdout.slice(0, newline);
    const real = result.stdout.slice(newline + 1).replace(/\n$/, "");
    if (result.exitCode !== 0 || newline < 0 || !real.startsWith("/")) {
      throw new SandboxError(
        "sandbox_remote_error",
        `Could not resolve ${original} inside OpenSandbox sandbox ${this.id}: the image needs GNU realpath or readlink (with -m) or python3 to check symlinks (exit code ${result.exitCode}: ${result.stderr.trim() || "no output"}).`,
        { details: { path: original, exitCode: result.exitCode, stderr: result.stderr } },
      );
    }
    if (real !== this.realWorkspace && !real.startsWith(`${this.realWorkspace}/`)) {
      throw outside(original, this.workspace);
    }
    return { path: real, type };
  }

  /**
   * Runs `line` (a shell line for execd's `bash -c`) through `POST /command` with the SDK's
   * stream. execd sends one event per output line with the terminator stripped, which loses
   * whether the output ended with a newline; so the line runs inside a wrapper that prints an
   * end marker on both streams after it, and the output is rebuilt exactly from the events
   * before the marker (see {@link ExactLines}). Timeouts and aborts interrupt the command
   * (`DELETE /command?id=`, which kills its process group) before throwing.
   */
  private async runCommand(line: string, options: RunOptions): Promise<ExecResult> {
    const started = performance.now();
    const stdout = new OutputBuffer(options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES, options.onStdout);
    const stderr = new OutputBuffer(options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES, options.onStderr);
    if (options.signal?.aborted) throw this.stopError("aborted", options, stdout, stderr);
    const marker = `__openrath_end_${randomHex()}__`;
    const out = new ExactLines(stdout, marker);
    const err = new ExactLines(stderr, marker);
    const wrapped = `${line}\n__openrath_rc=$?\nprintf '\\n%s\\n' ${marker}\nprintf '\\n%s\\n' ${marker} >&2\nexit $__openrath_rc`;
    const controller = new AbortController();
    const init = deferred<string | undefined>();
    const ended = deferred<void>();
    let stop: Stop | undefined;
    let stopping: Promise<void> | undefined;
    let exit: { code: number } | { startError: string } | undefined;

    const interrupt = async () => {
      const id = await within(init.promise, INIT_WAIT_MS);
      if (id) {
        try {
          await this.parts.execd.commands.interrupt(id);
        } catch {
          // Already finished, or the sandbox is gone: nothing left to kill.
        }
        await within(ended.promise, INTERRUPT_GRACE_MS);
      }
      controller.abort();
    };
    const halt = (why: Stop) => {
      if (stop || exit) return;
      stop = why;
      // A closing sandbox is being deleted with everything in it: no interrupt to send.
      stopping = why === "closed" ? Promise.resolve(controller.abort()) : interrupt();
    };
    const timer =
      options.timeoutMs !== undefined ? setTimeout(() => halt("timeout"), options.timeoutMs) : undefined;
    const onAbort = () => halt("aborted");
    const onClose = () => halt("closed");
    options.signal?.addEventListener("abort", onAbort);
    this.lifetime.signal.addEventListener("abort", onClose);

    let failure: unknown;
    try {
      const stream = this.parts.execd.commands.runStream(
        wrapped,
        {
          workingDirectory: options.cwd,
          ...(options.timeoutMs !== undefined
            ? { timeoutSeconds: (options.timeoutMs + SERVER_TIMEOUT_SLACK_MS) / 1000 }
            : {}),
          ...(options.env ? { envs: { ...options.env } } : {}),
        },
        controller.signal,
      );
      events: for await (const event of stream) {
        switch (event.type) {
          case "init":
            init.resolve(typeof event.text === "string" ? event.text : undefined);
            break;
          case "stdout":
            if (typeof event.text === "string") out.line(event.text);
            break;
          case "stderr":
            if (typeof event.text === "string") err.line(event.text);
            break;
          case "execution_complete":
            exit = { code: 0 };
            break events;
          case "error":
            exit = exitOf(event.error as ExecdEvent["error"]);
            break events;
          default:
            // ping (keep-alive), status and anything newer: nothing to do.
            break;
        }
      }
    } catch (error) {
      failure = error;
    } finally {
      if (timer) clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      this.lifetime.signal.removeEventListener("abort", onClose);
      init.resolve(undefined);
      ended.resolve();
      // Frees the connection without waiting out execd's graceful delay after the terminal event.
      if (!stopping) controller.abort();
    }
    out.finish();
    err.finish();
    if (stop) {
      await stopping;
      throw this.stopError(stop, options, stdout, stderr);
    }
    if (failure !== undefined) throw this.failure(failure, options.what);
    if (!exit) {
      throw new SandboxError(
        "sandbox_transport",
        `${options.what} lost its result: execd's stream ended without execution_complete or error, so the exit code is unknown.`,
        { details: { id: this.id, stdout: stdout.text(), stderr: stderr.text() } },
      );
    }
    if ("startError" in exit) {
      throw new SandboxError("sandbox_remote_error", `${options.what} could not start: ${exit.startError}`, {
        details: { id: this.id },
      });
    }
    if (exit.code === -1 && options.timeoutMs !== undefined) {
      // execd's own timeout fired first (a slow clock or network): still a timeout.
      throw this.stopError("timeout", options, stdout, stderr);
    }
    return {
      exitCode: exit.code,
      stdout: stdout.text(),
      stderr: stderr.text(),
      truncated: stdout.truncated || stderr.truncated,
      durationMs: Math.round(performance.now() - started),
    };
  }

  /**
   * Runs Python through `POST /code` in a fresh code-interpreter context (no state shared with
   * other calls, no "session is busy" between parallel calls), deleted afterwards. `/code` takes
   * no environment, so `env` is applied by a first cell that updates `os.environ` in the fresh
   * kernel. The SDK has no code-interpreter client (that package is not on npm), so this calls
   * the HTTP API directly.
   */
  private async runPython(code: string, options: RunOptions): Promise<ExecResult> {
    const started = performance.now();
    const stdout = new OutputBuffer(options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES, options.onStdout);
    const stderr = new OutputBuffer(options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES, options.onStderr);
    if (options.signal?.aborted) throw this.stopError("aborted", options, stdout, stderr);
    const context = await this.execdJson<{ id?: string }>(
      "POST",
      "/code/context",
      { language: "python", cwd: options.cwd },
      options.what,
    );
    if (typeof context?.id !== "string") {
      throw new SandboxError(
        "sandbox_remote_error",
        `${options.what}: execd created a context without an id.`,
        {
          details: { id: this.id },
        },
      );
    }
    const contextId = context.id;
    const controller = new AbortController();
    const ended = deferred<void>();
    let stop: Stop | undefined;
    let stopping: Promise<void> | undefined;
    let finished = false;
    const halt = (why: Stop) => {
      if (stop || finished) return;
      stop = why;
      if (why === "closed") {
        controller.abort();
        stopping = Promise.resolve();
        return;
      }
      stopping = (async () => {
        try {
          await this.execdCall("DELETE", `/code?id=${encodeURIComponent(contextId)}`);
        } catch {
          // Nothing running any more.
        }
        await within(ended.promise, INTERRUPT_GRACE_MS);
        controller.abort();
      })();
    };
    const timer =
      options.timeoutMs !== undefined ? setTimeout(() => halt("timeout"), options.timeoutMs) : undefined;
    const onAbort = () => halt("aborted");
    const onClose = () => halt("closed");
    options.signal?.addEventListener("abort", onAbort);
    this.lifetime.signal.addEventListener("abort", onClose);
    let failure: unknown;
    let exit: number | undefined;
    try {
      if (options.env) {
        const setup = `import os as _openrath_os\n_openrath_os.environ.update(${JSON.stringify(options.env)})\ndel _openrath_os`;
        const setupErr = new OutputBuffer(64 * 1024);
        const done = await this.runCell(
          contextId,
          setup,
          new OutputBuffer(64 * 1024),
          setupErr,
          controller.signal,
        );
        if (done !== 0) {
          throw new SandboxError(
            "sandbox_remote_error",
            `${options.what}: setting env in the Python kernel failed: ${setupErr.text()}`,
            {
              details: { id: this.id },
            },
          );
        }
      }
      exit = await this.runCell(contextId, code, stdout, stderr, controller.signal);
    } catch (error) {
      failure = error;
    } finally {
      finished = true;
      if (timer) clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      this.lifetime.signal.removeEventListener("abort", onClose);
      ended.resolve();
      if (!stopping) controller.abort();
    }
    if (!this.closed) {
      // Each context is a kernel process: free it now rather than leave it to the sandbox's end.
      await within(
        this.execdCall("DELETE", `/code/contexts/${encodeURIComponent(contextId)}`).catch(() => undefined),
        CONTEXT_DELETE_WAIT_MS,
      );
    }
    if (stop) {
      await stopping;
      throw this.stopError(stop, options, stdout, stderr);
    }
    if (failure !== undefined) throw this.failure(failure, options.what);
    if (exit === undefined) {
      throw new SandboxError(
        "sandbox_transport",
        `${options.what} lost its result: execd's stream ended without execution_complete or error.`,
        { details: { id: this.id, stdout: stdout.text(), stderr: stderr.text() } },
      );
    }
    return {
      exitCode: exit,
      stdout: stdout.text(),
      stderr: stderr.text(),
      truncated: stdout.truncated || stderr.truncated,
      durationMs: Math.round(performance.now() - started),
    };
  }

  /**
   * Runs one cell and streams its output (raw Jupyter chunks, newlines kept). Returns 0 after
   * `execution_complete`, 1 after an `error` (whose traceback goes to stderr), `undefined` when
   * the stream ended without either.
   */
  private async runCell(
    contextId: string,
    code: string,
    stdout: OutputBuffer,
    stderr: OutputBuffer,
    signal: AbortSignal,
  ): Promise<number | undefined> {
    const response = await this.parts.config.sseFetch(`${this.parts.execdUrl}/code`, {
      method: "POST",
      headers: {
        ...this.parts.execdHeaders,
        accept: "text/event-stream",
        "content-type": "application/json",
      },
      body: JSON.stringify({ code, context: { id: contextId, language: "python" } }),
      signal,
    });
    if (!response.ok) throw await httpFailure(response);
    if (!response.body) throw new TypeError("execd answered /code without a body");
    for await (const event of parseEventStream(response.body)) {
      switch (event.type) {
        case "stdout":
          if (typeof event.text === "string") stdout.push(event.text);
          break;
        case "stderr":
          if (typeof event.text === "string") stderr.push(event.text);
          break;
        case "execution_complete":
          return 0;
        case "error": {
          const e = event.error ?? {};
          const trace = (e.traceback ?? []).map((l) => stripAnsi(String(l))).join("\n");
          stderr.push(`${trace || `${e.ename ?? "Error"}: ${e.evalue ?? ""}`}\n`);
          return 1;
        }
        default:
          // init, execution_count, result (an expression's value, not printed output), status, ping.
          break;
      }
    }
    return undefined;
  }

  /** A plain execd call (the SDK has none for `/code`); errors carry the parsed body. */
  private async execdCall(method: string, path: string, body?: unknown): Promise<Response> {
    const response = await this.parts.config.fetch(`${this.parts.execdUrl}${path}`, {
      method,
      headers: {
        ...this.parts.execdHeaders,
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    if (!response.ok) throw await httpFailure(response);
    return response;
  }

  private async execdJson<T>(method: string, path: string, body: unknown, what: string): Promise<T> {
    try {
      const response = await this.execdCall(method, path, body);
      return (await response.json()) as T;
    } catch (error) {
      throw this.failure(error, what);
    }
  }

  private stopError(
    stop: Stop,
    options: RunOptions,
    stdout: OutputBuffer,
    stderr: OutputBuffer,
  ): SandboxError {
    const details = { id: this.id, stdout: stdout.text(), stderr: stderr.text() };
    if (stop === "closed") {
      return new SandboxError(
        "sandbox_closed",
        `${options.what} was cut short: OpenSandbox sandbox ${this.id} was closed.`,
        {
          details,
        },
      );
    }
    if (stop === "timeout") {
      return new SandboxError(
        "exec_timeout",
        `${options.what} did not finish within ${options.timeoutMs} ms and was killed. Raise timeoutMs or make it faster.`,
        { details: { ...details, timeoutMs: options.timeoutMs } },
      );
    }
    return new SandboxError("aborted", `${options.what} was aborted and killed.`, {
      cause: options.signal?.reason,
      details,
    });
  }
}

/**
 * Rebuilds one output stream from execd's line events. execd strips each line's terminator and
 * sends an empty line as `"\n"`, so a trailing newline is indistinguishable from none; the
 * command wrapper therefore prints `\n<marker>\n` after the command, which guarantees that every
 * line of the real output was terminated. Each line's newline is held back until the next event
 * shows it belongs to the output rather than to the marker, so what the streaming callback gets
 * concatenates to exactly the output. (`\r` and `\r\n` come back as `\n`: execd splits on them too.)
 */
class ExactLines {
  private started = false;
  private done = false;

  constructor(
    private readonly out: OutputBuffer,
    private readonly marker: string,
  ) {}

  line(text: string): void {
    if (this.done) return;
    if (text === this.marker) {
      this.done = true;
      return;
    }
    const chunk = (this.started ? "\n" : "") + (text === "\n" ? "" : text);
    this.started = true;
    if (chunk !== "") this.out.push(chunk);
  }

  /** Ends the stream; without the marker (the command was killed) the last line counts as terminated. */
  finish(): void {
    if (!this.done && this.started) this.out.push("\n");
    this.done = true;
  }
}

/**
 * A shell snippet printing the canonical path of `quoted` (a shell-quoted absolute path) with every
 * symlink resolved, whether or not the path exists: GNU `realpath -m`, else `readlink -m`, else
 * Python's `os.path.realpath` (busybox images have neither `-m`).
 */
function realpathOf(quoted: string): string {
  return (
    `{ realpath -m -- ${quoted} 2>/dev/null || readlink -m -- ${quoted} 2>/dev/null || ` +
    `python3 -c 'import os, sys; print(os.path.realpath(sys.argv[1]))' ${quoted} 2>/dev/null; }`
  );
}

function randomHex(): string {
  const bytes = new Uint8Array(8);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function aborted(what: string, signal: AbortSignal): SandboxError {
  return new SandboxError("aborted", `${what} was aborted before it started.`, {
    cause: signal.reason,
    details: {},
  });
}

/** The exit code of an `error` event: `evalue` is the code, `-1` plus `signal: <name>` for a signal. */
function exitOf(error: ExecdEvent["error"]): { code: number } | { startError: string } {
  const value = String(error?.evalue ?? "").trim();
  if (!/^-?\d+$/.test(value)) return { startError: value || String(error?.ename ?? "unknown error") };
  const code = Number(value);
  if (code !== -1) return { code };
  const signal = /^signal: (.+)$/.exec(String(error?.traceback?.[0] ?? ""))?.[1];
  const number = signal ? SIGNALS[signal] : undefined;
  return { code: number ? 128 + number : -1 };
}

function entryType(type: string | undefined): FileEntry["type"] {
  return type === "directory" || type === "symlink" || type === "other" ? type : "file";
}

function pick(options: Omit<ExecOptions, "stdin" | "cwd" | "env">) {
  for (const name of ["timeoutMs", "maxOutputBytes"] as const) {
    const value = options[name];
    if (value !== undefined && (typeof value !== "number" || Number.isNaN(value) || value <= 0)) {
      throw new OpenRathError(
        "invalid_argument",
        `${name} must be a positive number${name === "timeoutMs" ? " of milliseconds" : " of bytes"}; got ${JSON.stringify(value)}.`,
        { details: { [name]: value } },
      );
    }
  }
  return {
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onStdout ? { onStdout: options.onStdout } : {}),
    ...(options.onStderr ? { onStderr: options.onStderr } : {}),
    ...(options.maxOutputBytes !== undefined ? { maxOutputBytes: options.maxOutputBytes } : {}),
  };
}

function notFound(path: string, workspace: string): SandboxError {
  return new SandboxError("file_not_found", `${path} does not exist in the workspace ${workspace}.`, {
    details: { path },
  });
}

function notAFile(path: string, why: string): SandboxError {
  return new SandboxError("not_a_file", `Cannot write ${path}: ${why}.`, { details: { path } });
}

/** An error shaped like the SDK's `SandboxApiException`, so `remoteFailure` reads it the same way. */
async function httpFailure(response: Response): Promise<Error> {
  const text = await response.text().catch(() => "");
  const error = new Error(`HTTP ${response.status}`) as Error & {
    statusCode: number;
    rawBody: string;
    requestId?: string;
  };
  error.statusCode = response.status;
  error.rawBody = text;
  const requestId = response.headers.get("x-request-id");
  if (requestId) error.requestId = requestId;
  return error;
}

/**
 * Deletes a sandbox, retrying transient failures with backoff. A 404 means it is already gone
 * (expired, or deleted by someone else), which is what we wanted.
 */
export async function deleteSandbox(sandboxes: Sandboxes, id: string, attempts = 4): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await sandboxes.deleteSandbox(id);
      return;
    } catch (error) {
      const failure = remoteFailure(error);
      if (failure.status === 404) return;
      const permanent =
        failure.status !== undefined &&
        failure.status < 500 &&
        failure.status !== 408 &&
        failure.status !== 429;
      if (permanent || attempt >= attempts) {
        throw toSandboxError(
          error,
          `Deleting OpenSandbox sandbox ${id} (it may still be running until it expires)`,
          "sandbox_remote_error",
          {
            id,
          },
        );
      }
      await sleep(250 * 2 ** (attempt - 1));
    }
  }
}
