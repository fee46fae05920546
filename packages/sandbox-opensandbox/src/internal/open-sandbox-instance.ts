import {
  type ExecOptions,
  type ExecResult,
  type FileEntry,
  SandboxError,
  type SandboxV1,
} from "@openrath/core";
import { checkEnv, confinePath, decodeTextFile, outside, resolveExecTimeout } from "@openrath/core/backend";
import { runPython } from "./code-contexts.js";
import { type RunContext, type RunOptions, runCommand } from "./commands.js";
import { explain, failureDetails, isUnreachable, remoteFailure, toSandboxError } from "./errors.js";
import { ExecdClient } from "./execd-client.js";
import type { ConnectionConfig, ExecdStack, Sandboxes } from "./sdk.js";
import { shellJoin, shellQuote } from "./shell.js";
import { sleep } from "./sleep.js";
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

/** `depth` of a recursive `/directories/list`. */
const RECURSIVE_DEPTH = 4096;

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

  /** The execd calls the adapter makes itself (streams, `/code`). */
  private readonly client: ExecdClient;

  constructor(private readonly parts: InstanceParts) {
    this.client = new ExecdClient(parts.config, parts.execdUrl, parts.execdHeaders);
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
        throw new SandboxError(
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
      throw new SandboxError(
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
      throw new SandboxError("invalid_argument", `runCode takes the code as a string; got ${typeof code}.`, {
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
    if (this.parts.spec.codeInterpreter) return runPython(this.runContext, code, run);
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

  /** What commands and code cells run through. */
  private get runContext(): RunContext {
    return {
      execd: this.client,
      sandboxId: this.id,
      lifetime: this.lifetime.signal,
      mapFailure: (error, what) => this.failure(error, what),
    };
  }

  private runCommand(line: string, options: RunOptions): Promise<ExecResult> {
    return runCommand(this.runContext, line, options);
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

function aborted(what: string, signal: AbortSignal): SandboxError {
  return new SandboxError("aborted", `${what} was aborted before it started.`, {
    cause: signal.reason,
    details: {},
  });
}

function entryType(type: string | undefined): FileEntry["type"] {
  return type === "directory" || type === "symlink" || type === "other" ? type : "file";
}

/** The run options every command and cell shares: the timeout resolved (default 10 min), caps checked. */
function pick(options: Omit<ExecOptions, "stdin" | "cwd" | "env">) {
  const value = options.maxOutputBytes;
  if (value !== undefined && (typeof value !== "number" || Number.isNaN(value) || value <= 0)) {
    throw new SandboxError(
      "invalid_argument",
      `maxOutputBytes must be a positive number of bytes; got ${JSON.stringify(value)}.`,
      { details: { maxOutputBytes: value } },
    );
  }
  return {
    timeoutMs: resolveExecTimeout(options.timeoutMs),
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
