import { randomUUID } from "node:crypto";
import type { Duplex, Readable } from "node:stream";
import {
  type ExecOptions,
  type ExecResult,
  type FileEntry,
  SandboxError,
  type SandboxV1,
} from "@openrath/core";
import {
  backoffDelay,
  checkCode,
  checkCommand,
  checkEnv,
  checkWriteData,
  confinePath,
  DEFAULT_MAX_OUTPUT_BYTES,
  decodeTextFile,
  OutputBuffer,
  outside,
  resolveExecTimeout,
} from "@openrath/core/backend";
import type Dockerode from "dockerode";
import { type PackEntry, packEntries, readSingleFile } from "./archive.js";
import { type DockerEndpoint, isConnectionError, messageOf, statusOf, unavailable } from "./docker-client.js";
import { ExecExits, type ExpectedExit } from "./exec-exits.js";
import { untrackContainer } from "./exit-cleanup.js";
import { FrameDemuxer } from "./frame-demuxer.js";
import { LANGUAGES } from "./languages.js";
import type { ParsedSpec } from "./schemas.js";
import { KILL_GROUP_BASE, KILL_TREE, RESOLVE } from "./scripts.js";
import { type ResolvedPath, statPath } from "./stat-path.js";

/** Everything a {@link ContainerSandbox} needs from `open`. */
export interface ContainerSandboxInit {
  readonly endpoint: DockerEndpoint;
  /** The client the container came from (for its event stream). */
  readonly docker: Dockerode;
  readonly container: Dockerode.Container;
  readonly spec: ParsedSpec;
  /** The workspace with symlinks resolved, for confinement checks. */
  readonly realWorkspace: string;
  /** Owner of files written through the archive API. */
  readonly uid: number;
  readonly gid: number;
  readonly languages: readonly string[];
}

/** Options of the internal command runner: {@link ExecOptions} plus who runs it. */
interface RunOptions extends Omit<ExecOptions, "cwd"> {
  /** Absolute working directory inside the container. */
  readonly workingDir?: string;
  /** User override (`"0"` for the sandbox's own root-only helpers). */
  readonly user?: string;
  /** Whether a timeout kills the process tree (false for the kill helper itself, so it cannot recurse). */
  readonly killOnStop?: boolean;
}

/** What {@link ContainerSandbox.resolve} learns about a path. */
interface Resolved {
  /** `d`, `f`, `o` (other), `n` (missing), `N` (missing below a non-directory), `loop`. */
  readonly type: string;
  /** Absolute path with every symlink resolved. */
  readonly path: string;
  readonly executable: boolean;
  /** Fields and lines printed after the first three (mode-specific). */
  readonly rest: string;
}

/** Helpers the sandbox runs itself never wait longer than this. */
const INTERNAL_TIMEOUT_MS = 60_000;
/** Listings bigger than this are cut (and reported as an error rather than silently truncated). */
const MAX_LISTING_BYTES = 64 * 1024 * 1024;
/** Code longer than this goes through a file instead of an argument (Linux caps one argument at 128 KiB). */
const MAX_INLINE_CODE_BYTES = 64 * 1024;
/** The biggest file readFile brings into memory. */
const MAX_READ_BYTES = 512 * 1024 * 1024;
/** Group ids handed to commands wrap around after this many (far more than can run at once). */
const KILL_GROUPS = 0x00ffffff;

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** One sandbox: a running container with its workspace. */
export class ContainerSandbox implements SandboxV1 {
  readonly id: string;
  readonly workspace: string;
  private readonly endpoint: DockerEndpoint;
  private readonly container: Dockerode.Container;
  private readonly spec: ParsedSpec;
  private readonly realWorkspace: string;
  private readonly uid: number;
  private readonly gid: number;
  private readonly languages: readonly string[];
  private closed = false;
  private closing: Promise<void> | undefined;
  /** The next command's own group id (see `KILL_GROUP_BASE`). */
  private nextGroup = 0;
  /** Exit codes from the daemon's events, so a finished exec needs no inspect. */
  private readonly exits: ExecExits;

  constructor(init: ContainerSandboxInit) {
    this.endpoint = init.endpoint;
    this.container = init.container;
    this.id = init.container.id;
    this.spec = init.spec;
    this.workspace = init.spec.workspace;
    this.realWorkspace = init.realWorkspace;
    this.uid = init.uid;
    this.gid = init.gid;
    this.languages = init.languages;
    this.exits = new ExecExits(init.docker, init.container.id);
  }

  async exec(command: string | readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
    this.checkOpen();
    const argv = this.argv(command);
    let workingDir = this.workspace;
    if (options.cwd !== undefined) {
      const relative = confinePath(options.cwd, this.workspace);
      if (relative !== ".") {
        const resolved = await this.stat(relative, options.cwd);
        if (resolved.type === "n" || resolved.type === "N" || resolved.type === "loop") {
          throw new SandboxError(
            "file_not_found",
            `The working directory ${JSON.stringify(options.cwd)} does not exist in the sandbox workspace ${this.workspace}. Create it first (writeFile or exec("mkdir -p …")).`,
            { details: { path: options.cwd } },
          );
        }
        if (resolved.type !== "d") {
          throw new SandboxError(
            "not_a_directory",
            `The working directory ${JSON.stringify(options.cwd)} is not a directory.`,
            { details: { path: options.cwd } },
          );
        }
        workingDir = `${this.workspace}/${relative}`;
      }
    }
    const { cwd: _cwd, ...rest } = options;
    return this.run(argv, { ...rest, workingDir });
  }

  readFile(path: string, options?: { readonly encoding?: "utf8" }): Promise<string>;
  readFile(path: string, options: { readonly encoding: "bytes" }): Promise<Uint8Array>;
  async readFile(
    path: string,
    options: { readonly encoding?: "utf8" | "bytes" } = {},
  ): Promise<string | Uint8Array> {
    this.checkOpen();
    const relative = confinePath(path, this.workspace);
    const resolved = await this.stat(relative, path);
    if (resolved.type === "d") {
      throw new SandboxError("not_a_file", `${JSON.stringify(path)} is a directory, not a file.`, {
        details: { path },
      });
    }
    if (resolved.type !== "f") this.throwMissingOrOther(resolved, path);
    let entry: Awaited<ReturnType<typeof readSingleFile>>;
    try {
      const stream = (await this.container.getArchive({ path: resolved.path })) as Readable;
      entry = await readSingleFile(stream, path, MAX_READ_BYTES);
    } catch (error) {
      if (statusOf(error) === 404 && !/no such container/i.test(messageOf(error))) {
        throw new SandboxError(
          "file_not_found",
          `${JSON.stringify(path)} does not exist in the sandbox workspace.`,
          {
            cause: error,
            details: { path },
          },
        );
      }
      throw this.apiError(error, `read ${JSON.stringify(path)}`);
    }
    if (entry.type !== "file") {
      throw new SandboxError("not_a_file", `${JSON.stringify(path)} is not a regular file.`, {
        details: { path },
      });
    }
    return options.encoding === "bytes" ? entry.data : decodeTextFile(entry.data, path);
  }

  async writeFile(path: string, data: string | Uint8Array): Promise<{ readonly bytesWritten: number }> {
    this.checkOpen();
    const relative = confinePath(path, this.workspace);
    checkWriteData(data, path);
    if (relative === ".") {
      throw new SandboxError("not_a_file", `${JSON.stringify(path)} is the workspace root, a directory.`, {
        details: { path },
      });
    }
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    const resolved = await this.stat(relative, path);
    if (resolved.type === "d") {
      throw new SandboxError(
        "not_a_file",
        `${JSON.stringify(path)} is a directory; writeFile only replaces files. Remove it first or pick another name.`,
        { details: { path } },
      );
    }
    if (resolved.type === "N") {
      throw new SandboxError(
        "not_a_directory",
        `Cannot create ${JSON.stringify(path)}: one of its parent paths exists and is not a directory.`,
        { details: { path } },
      );
    }
    if (resolved.type === "loop") this.throwMissingOrOther(resolved, path);
    if (resolved.type === "o") {
      throw new SandboxError("not_a_file", `${JSON.stringify(path)} exists and is not a regular file.`, {
        details: { path },
      });
    }
    // A new file's missing parents go into the same archive, owned by the sandbox user; existing
    // directories are not in it, so they keep their owners.
    const fileMode = resolved.executable ? 0o755 : 0o644;
    let directory: string;
    let entries: PackEntry[];
    if (resolved.type === "n" && resolved.existing !== undefined && resolved.missing) {
      directory = resolved.existing;
      const missing = resolved.missing;
      entries = missing.map((_, i) => ({
        name: missing.slice(0, i + 1).join("/"),
        type: i === missing.length - 1 ? ("file" as const) : ("directory" as const),
        ...(i === missing.length - 1 ? { data: bytes, mode: fileMode } : {}),
        uid: this.uid,
        gid: this.gid,
      }));
    } else {
      const slash = resolved.path.lastIndexOf("/");
      directory = slash <= 0 ? "/" : resolved.path.slice(0, slash);
      entries = [
        {
          name: resolved.path.slice(slash + 1),
          type: "file",
          data: bytes,
          mode: fileMode,
          uid: this.uid,
          gid: this.gid,
        },
      ];
    }
    const archive = packEntries(entries);
    try {
      await this.container.putArchive(archive, { path: directory, noOverwriteDirNonDir: "true" });
    } catch (error) {
      throw this.apiError(error, `write ${JSON.stringify(path)}`);
    }
    return { bytesWritten: bytes.length };
  }

  async listFiles(path = ".", options: { readonly recursive?: boolean } = {}): Promise<FileEntry[]> {
    this.checkOpen();
    const relative = confinePath(path, this.workspace);
    const resolved = await this.resolve(options.recursive ? "L" : "l", relative, path);
    if (resolved.type === "f" || resolved.type === "o") {
      throw new SandboxError("not_a_directory", `${JSON.stringify(path)} is not a directory.`, {
        details: { path },
      });
    }
    if (resolved.type !== "d") this.throwMissingOrOther(resolved, path);
    const base = relative === "." ? "" : `${relative}/`;
    const entries: FileEntry[] = [];
    for (const record of splitListing(resolved.rest)) {
      const mode = Number.parseInt(record.mode, 16);
      const format = mode & S_IFMT;
      const type =
        format === S_IFDIR
          ? "directory"
          : format === S_IFREG
            ? "file"
            : format === S_IFLNK
              ? "symlink"
              : "other";
      const entryPath = base + record.path;
      entries.push({
        name: entryPath.slice(entryPath.lastIndexOf("/") + 1),
        path: entryPath,
        type,
        size: type === "directory" ? 0 : Number(record.size),
      });
    }
    return entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  async exists(path: string): Promise<boolean> {
    this.checkOpen();
    const relative = confinePath(path, this.workspace);
    const resolved = await this.stat(relative, path);
    return resolved.type === "d" || resolved.type === "f" || resolved.type === "o";
  }

  async runCode(
    code: string,
    language: string,
    options: Omit<ExecOptions, "stdin"> = {},
  ): Promise<ExecResult> {
    this.checkOpen();
    const runner = this.languages.includes(language) ? LANGUAGES[language] : undefined;
    if (runner === undefined) {
      throw new SandboxError(
        "unsupported_language",
        `This docker sandbox runs ${this.languages.map((l) => JSON.stringify(l)).join(", ")}, not ${JSON.stringify(language)}. Declare more with dockerSandbox({ languages }) and use an image that has their interpreters.`,
        { details: { language, languages: this.languages } },
      );
    }
    checkCode(code, language);
    const { stdin: _stdin, ...rest } = options as ExecOptions;
    if (new TextEncoder().encode(code).length <= MAX_INLINE_CODE_BYTES && !code.includes("\0")) {
      return this.exec([...runner.inline, code], rest);
    }
    // Too long for one argument: the code goes to a file under /tmp, removed after the run.
    const file = `/tmp/.openrath-code-${randomUUID()}.${runner.extension}`;
    try {
      await this.container.putArchive(
        packEntries([
          {
            name: file.slice(5),
            type: "file",
            data: new TextEncoder().encode(code),
            uid: this.uid,
            gid: this.gid,
          },
        ]),
        { path: "/tmp" },
      );
    } catch (error) {
      throw this.apiError(error, "write the code to /tmp (does the image have a /tmp directory?)");
    }
    try {
      return await this.exec([...runner.file, file], rest);
    } finally {
      await this.run(["rm", "-f", file], { user: this.helperUser, timeoutMs: INTERNAL_TIMEOUT_MS }).catch(
        () => undefined,
      );
    }
  }

  /**
   * Removes the container. Idempotent; a container already gone counts as removed. When the
   * daemon cannot be reached the call rejects with `sandbox_unavailable` and the container stays
   * tracked (the exit clean-up and `removeOrphanedSandboxes()` still find it); a later `close()`
   * tries again.
   */
  close(): Promise<void> {
    this.closed = true;
    this.exits.close();
    this.closing ??= (async () => {
      try {
        await this.container.remove({ force: true, v: true });
      } catch (error) {
        const status = statusOf(error);
        // 404: already gone; 409: a removal is already in progress.
        if (status !== 404 && status !== 409) {
          this.closing = undefined;
          if (isConnectionError(error)) throw unavailable(this.endpoint, error);
          throw new SandboxError(
            "sandbox_remote_error",
            `Docker failed to remove container ${this.id.slice(0, 12)}: ${messageOf(error)}. Call close() again, or removeOrphanedSandboxes() later.`,
            { cause: error, details: { id: this.id, ...(status === undefined ? {} : { status }) } },
          );
        }
      }
      untrackContainer(this.id);
    })();
    return this.closing;
  }

  /** The user of the sandbox's own helpers: the sandbox user with its own group. */
  private get helperUser(): string {
    return `${this.uid}:${this.gid}`;
  }

  /** The argv of `command`: a string runs through `/bin/sh -c`, an array as it is. */
  private argv(command: string | readonly string[]): string[] {
    const checked = checkCommand(command);
    if (typeof checked === "string") return ["/bin/sh", "-c", checked];
    // A process argument is a C string: it cannot hold a NUL byte.
    if (checked.some((part) => part.includes("\0"))) {
      throw new SandboxError(
        "invalid_argument",
        `exec takes an argv without NUL bytes, got ${JSON.stringify(command)}.`,
        { details: { command } },
      );
    }
    // `exec "$@"` replaces the shell with the program at once, arguments untouched; it only makes a
    // missing program fail like in a shell (exit 127, message on stderr) instead of Docker's exit
    // 126 with its runtime error on stdout.
    return ["/bin/sh", "-c", 'exec "$@"', "sh", ...checked];
  }

  private checkOpen(): void {
    if (this.closed) {
      throw new SandboxError("sandbox_closed", `The docker sandbox ${this.id.slice(0, 12)} was closed.`, {
        details: { id: this.id },
      });
    }
  }

  /** Maps a failed Engine API call to a sandbox error. */
  private apiError(error: unknown, what: string): SandboxError {
    if (SandboxError.isInstance(error)) return error as SandboxError;
    if (this.closed) {
      return new SandboxError("sandbox_closed", `The docker sandbox ${this.id.slice(0, 12)} was closed.`, {
        cause: error,
        details: { id: this.id },
      });
    }
    if (isConnectionError(error)) return unavailable(this.endpoint, error);
    const code = (error as { code?: unknown })?.code;
    if (code === "ECONNRESET" || code === "EPIPE") {
      return new SandboxError(
        "sandbox_transport",
        `The connection to Docker broke while trying to ${what}: ${code}.`,
        {
          cause: error,
          details: { endpoint: this.endpoint.label },
        },
      );
    }
    const status = statusOf(error);
    const message = messageOf(error);
    if (status === 404 && /no such container/i.test(message)) {
      return new SandboxError(
        "sandbox_closed",
        `The container of docker sandbox ${this.id.slice(0, 12)} no longer exists (removed outside this sandbox?).`,
        { cause: error, details: { id: this.id } },
      );
    }
    if (status === 409) {
      return new SandboxError(
        "sandbox_closed",
        `The container of docker sandbox ${this.id.slice(0, 12)} is not running (${message}).`,
        { cause: error, details: { id: this.id } },
      );
    }
    return new SandboxError("sandbox_remote_error", `Docker failed to ${what}: ${message}`, {
      cause: error,
      details: { id: this.id, ...(status === undefined ? {} : { status }) },
    });
  }

  private throwMissingOrOther(resolved: Pick<Resolved, "type">, path: string): never {
    if (resolved.type === "loop") {
      throw new SandboxError(
        "file_not_found",
        `${JSON.stringify(path)} cannot be resolved (a symlink loop, or a directory that cannot be searched).`,
        { details: { path } },
      );
    }
    if (resolved.type === "o") {
      throw new SandboxError("not_a_file", `${JSON.stringify(path)} is not a regular file.`, {
        details: { path },
      });
    }
    throw new SandboxError(
      "file_not_found",
      `${JSON.stringify(path)} does not exist in the sandbox workspace.`,
      {
        details: { path },
      },
    );
  }

  /**
   * Resolves a confined workspace-relative path through the archive API (no exec: see
   * `statPath`), symlinks included, and refuses one that leaves the workspace.
   */
  private async stat(relative: string, asked: string): Promise<ResolvedPath> {
    const root = this.realWorkspace;
    const inside = (path: string) => path === root || path.startsWith(root === "/" ? "/" : `${root}/`);
    let resolved: ResolvedPath;
    try {
      resolved = await statPath(this.container, root, relative, inside);
    } catch (error) {
      throw this.apiError(error, `look up ${JSON.stringify(asked)}`);
    }
    if (!inside(resolved.path)) throw outside(asked, this.workspace);
    return resolved;
  }

  /**
   * Resolves a confined workspace-relative path inside the container with one exec (symlinks
   * included) and lists it: what `listFiles` needs in one go. Refuses a path that leaves the
   * workspace.
   */
  private async resolve(mode: "l" | "L", relative: string, asked: string): Promise<Resolved> {
    const absolute = relative === "." ? this.workspace : `${this.workspace}/${relative}`;
    const result = await this.run(["/bin/sh", "-c", RESOLVE, "sh", mode, this.realWorkspace, absolute], {
      timeoutMs: INTERNAL_TIMEOUT_MS,
      maxOutputBytes: MAX_LISTING_BYTES,
      user: this.helperUser,
    });
    if (result.exitCode !== 0 || result.truncated) {
      throw new SandboxError(
        "sandbox_remote_error",
        result.truncated
          ? `The listing of ${JSON.stringify(asked)} is larger than ${MAX_LISTING_BYTES} bytes.`
          : `Resolving ${JSON.stringify(asked)} in the container failed (exit ${result.exitCode}): ${result.stderr.trim()}. Does the image have /bin/sh and readlink?`,
        { details: { path: asked } },
      );
    }
    const [type = "", path = "", executable = "", ...rest] = result.stdout.split("\0");
    const root = this.realWorkspace;
    if (path !== root && !path.startsWith(root === "/" ? "/" : `${root}/`))
      throw outside(asked, this.workspace);
    return { type, path, executable: executable === "x", rest: rest.join("\0") };
  }

  /**
   * Runs argv through the Engine exec API with demultiplexed output, stdin, a timeout and an
   * abort signal. A timeout or abort kills the command's whole process tree.
   */
  private async run(argv: readonly string[], options: RunOptions): Promise<ExecResult> {
    const started = performance.now();
    const timeoutMs = resolveExecTimeout(options.timeoutMs, this.spec.timeoutMs);
    const env = Object.entries(checkEnv(options.env)).map(([name, value]) => `${name}=${value}`);
    // Every command gets a group id of its own, which all its descendants keep (see KILL_TREE).
    const group = KILL_GROUP_BASE + (this.nextGroup++ % KILL_GROUPS);
    const stdin =
      options.stdin === undefined
        ? undefined
        : typeof options.stdin === "string"
          ? Buffer.from(options.stdin, "utf8")
          : toBuffer(options.stdin);
    const signal = options.signal;
    if (signal?.aborted) throw this.stopped("aborted", "", "", timeoutMs, true);

    const maxBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    const stdout = new OutputBuffer(maxBytes, options.onStdout);
    const stderr = new OutputBuffer(maxBytes, options.onStderr);
    const user = options.user ?? `${this.uid}:${group}`;

    let exec: Dockerode.Exec;
    let stream: Duplex;
    let exit: ExpectedExit;
    try {
      exec = await this.container.exec({
        Cmd: [...argv],
        Env: env,
        WorkingDir: options.workingDir ?? this.workspace,
        AttachStdin: stdin !== undefined,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
        ...(user === undefined ? {} : { User: user }),
      });
      exit = await this.exits.expect(exec.id);
      stream = (await exec.start({
        hijack: true,
        stdin: stdin !== undefined,
        Detach: false,
        Tty: false,
      })) as Duplex;
    } catch (error) {
      throw this.apiError(error, `run ${JSON.stringify(argv[0])}`);
    }

    let stdinSent = false;
    const demuxer = new FrameDemuxer((kind, payload) => (kind === 2 ? stderr : stdout).push(payload));
    const ended = new Promise<void>((resolve, reject) => {
      stream.on("data", (chunk: Buffer) => {
        try {
          demuxer.push(chunk);
        } catch (error) {
          stream.destroy(error as Error);
        }
      });
      stream.once("end", () => resolve());
      stream.once("close", () => resolve());
      stream.once("error", (error: NodeJS.ErrnoException) => {
        // The command may exit without reading its stdin; the write then fails harmlessly.
        if (stdinSent && (error.code === "EPIPE" || error.code === "ECONNRESET")) resolve();
        else reject(error);
      });
    });
    ended.catch(() => undefined);
    if (stdin !== undefined) {
      stdinSent = true;
      stream.end(stdin);
    }

    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const stop = new Promise<"timeout" | "aborted">((resolve) => {
      if (Number.isFinite(timeoutMs)) timer = setTimeout(() => resolve("timeout"), timeoutMs);
      if (signal) {
        onAbort = () => resolve("aborted");
        if (signal.aborted) onAbort();
        else signal.addEventListener("abort", onAbort, { once: true });
      }
    });
    const finished = ended.then(() => this.exits.exitCode(exit, (answered) => this.exitCode(exec, answered)));
    finished.catch(() => undefined);
    try {
      const outcome = await Promise.race([finished, stop]);
      if (outcome === "timeout" || outcome === "aborted") {
        const killed = options.killOnStop === false ? false : await this.killTree(group);
        await Promise.race([ended.catch(() => undefined), sleep(2_000)]);
        stream.destroy();
        throw this.stopped(outcome, stdout.text(), stderr.text(), timeoutMs, killed);
      }
      return {
        exitCode: outcome,
        stdout: stdout.text(),
        stderr: stderr.text(),
        truncated: stdout.truncated || stderr.truncated,
        durationMs: Math.round(performance.now() - started),
      };
    } catch (error) {
      if (SandboxError.isInstance(error)) throw error;
      throw this.apiError(error, `run ${JSON.stringify(argv[0])}`);
    } finally {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener("abort", onAbort);
    }
  }

  private stopped(
    reason: "timeout" | "aborted",
    stdout: string,
    stderr: string,
    timeoutMs: number,
    killed: boolean,
  ): SandboxError {
    const what =
      reason === "timeout"
        ? `The command ran longer than its ${timeoutMs} ms timeout`
        : "The command was aborted";
    const outcome = killed
      ? "its process tree was killed"
      : "its process tree could NOT be killed: Docker could not start the kill helper (is the container out of pids?); close the sandbox to stop it";
    return new SandboxError(reason === "timeout" ? "exec_timeout" : "aborted", `${what}; ${outcome}.`, {
      details: {
        stdout,
        stderr,
        ...(Number.isFinite(timeoutMs) ? { timeoutMs } : {}),
        ...(killed ? {} : { killed }),
      },
    });
  }

  /**
   * The exit code of a finished exec by inspecting it; the stream can end a while before Docker
   * records the exit. Gives up (with -1) once `answered` says the exit is known otherwise.
   */
  private async exitCode(exec: Dockerode.Exec, answered: () => boolean): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      if (answered()) return -1;
      const info = await exec.inspect();
      if (!info.Running && typeof info.ExitCode === "number") return info.ExitCode;
      if (attempt > 400) {
        throw new SandboxError(
          "sandbox_remote_error",
          "Docker kept reporting the command as running after its output ended.",
          { details: { id: this.id } },
        );
      }
      await sleep(backoffDelay(attempt + 1, { baseMs: 5, maxMs: 50 }));
    }
  }

  /**
   * Kills every process of one command (see {@link KILL_TREE}). The helper is itself an exec, which
   * Docker cannot start while the container is out of pids (a fork bomb), so it is retried for a
   * few seconds. Returns whether a kill pass ran.
   */
  private async killTree(group: number): Promise<boolean> {
    for (let attempt = 0; attempt < 8 && !this.closed; attempt++) {
      const result = await this.run(["/bin/sh", "-c", KILL_TREE, "sh", String(group)], {
        user: this.helperUser,
        timeoutMs: 15_000,
        killOnStop: false,
      }).catch(() => undefined);
      if (result?.exitCode === 0) return true;
      await sleep(backoffDelay(attempt + 1, { baseMs: 100, maxMs: 1600 }));
    }
    return this.closed;
  }
}

/** Splits the `<hex mode>:<size>:./<path>` lines of a listing; a path may itself hold newlines. */
function splitListing(text: string): { mode: string; size: string; path: string }[] {
  const records: { mode: string; size: string; path: string }[] = [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  for (const line of lines) {
    const match = /^([0-9a-f]+):(\d+):\.\/(.*)$/s.exec(line);
    if (match) records.push({ mode: match[1]!, size: match[2]!, path: match[3]! });
    else if (records.length > 0) records[records.length - 1]!.path += `\n${line}`;
  }
  return records;
}
