import {
  type ExecOptions,
  type ExecResult,
  type FileEntry,
  SandboxError,
  type SandboxV1,
} from "@openrath/core";
import { backoffDelay, checkCode, checkCommand, checkEnv, resolveExecTimeout } from "@openrath/core/backend";
import { runPython } from "./code-contexts.js";
import { type RunContext, type RunOptions, runCommand } from "./commands.js";
import { explain, failureDetails, isUnreachable, remoteFailure, toSandboxError } from "./errors.js";
import { ExecdClient } from "./execd-client.js";
import { RemoteFiles, realpathOf } from "./remote-files.js";
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
  private readonly files: RemoteFiles;

  constructor(private readonly parts: InstanceParts) {
    this.client = new ExecdClient(parts.config, parts.execdUrl, parts.execdHeaders);
    this.files = new RemoteFiles({
      sandboxId: parts.id,
      workspace: parts.spec.workspace,
      realWorkspace: () => this.realWorkspace,
      execd: parts.execd,
      runCommand: (line, options) => this.runCommand(line, options),
      failure: (error, what) => this.failure(error, what),
    });
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
    const checked = checkCommand(command);
    const line = typeof checked === "string" ? (checked.trim() === "" ? ":" : checked) : shellJoin(checked);
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

  readFile(path: string, options?: { readonly encoding?: "utf8" }): Promise<string>;
  readFile(path: string, options: { readonly encoding: "bytes" }): Promise<Uint8Array>;
  async readFile(
    path: string,
    options: { readonly encoding?: "utf8" | "bytes" } = {},
  ): Promise<string | Uint8Array> {
    this.assertOpen();
    return this.files.readFile(path, options as { readonly encoding: "bytes" });
  }

  async writeFile(path: string, data: string | Uint8Array): Promise<{ readonly bytesWritten: number }> {
    this.assertOpen();
    return this.files.writeFile(path, data);
  }

  async listFiles(path = ".", options: { readonly recursive?: boolean } = {}): Promise<FileEntry[]> {
    this.assertOpen();
    return this.files.listFiles(path, options);
  }

  async exists(path: string): Promise<boolean> {
    this.assertOpen();
    return this.files.exists(path);
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
    checkCode(code, language);
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
  private directory(cwd: string): Promise<string> {
    return this.files.directory(cwd);
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

function aborted(what: string, signal: AbortSignal): SandboxError {
  return new SandboxError("aborted", `${what} was aborted before it started.`, {
    cause: signal.reason,
    details: {},
  });
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
      await sleep(backoffDelay(attempt, { baseMs: 250, maxMs: Infinity }));
    }
  }
}
