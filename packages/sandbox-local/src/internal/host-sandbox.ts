import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import { rmSync } from "node:fs";
import {
  type FileHandle,
  mkdir,
  mkdtemp,
  open as openFile,
  realpath,
  rm,
  stat,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ExecOptions,
  type ExecResult,
  type FileEntry,
  SandboxError,
  type SandboxV1,
} from "@openrath/core";
import { checkCode, checkCommand, checkEnv, resolveExecTimeout } from "@openrath/core/backend";
import type { LocalSandboxSpec } from "../local-sandbox.js";
import { buildEnv } from "./build-env.js";
import { accountFiles, bwrapArgs, sandboxIds } from "./bwrap-args.js";
import type { CommandNamespace } from "./command-namespace.js";
import type { Interpreter } from "./detect-languages.js";
import { Namespace } from "./namespace.js";
import { EXEC_MARKER, killProcessTree } from "./process-tree.js";
import { registerExitCleanup, watched } from "./register-exit-cleanup.js";
import { runProcess } from "./run-process.js";
import type { SandboxTools } from "./sandbox-tools.js";
import { abortedBeforeStart } from "./stop-error.js";
import { errnoOf, fileError, mapFsError, WorkspaceFiles, type WorkspacePath } from "./workspace-files.js";
import { DIRECTORY_FLAGS, type WorkspaceRoot } from "./workspace-walk.js";

/** What {@link HostSandbox.open} needs: the parsed spec and the backend's settings. */
export interface HostSandboxConfig {
  /** A spec returned by the descriptor's `parseSpec` (isolation filled in, workspace absolute). */
  readonly spec: LocalSandboxSpec;
  readonly bwrapPath: string;
  readonly maxOutputBytes: number;
  /** `runCode` interpreters: on the host, and as seen inside a bubblewrap sandbox. */
  readonly interpreters: Readonly<Record<string, Interpreter>>;
  readonly isolatedInterpreters: Readonly<Record<string, Interpreter>>;
  /** What a bubblewrap sandbox runs (found when the backend first opened one). */
  readonly tools?: SandboxTools;
  /**
   * How an unisolated command gets a PID namespace of its own; without it, killing what a command
   * left is best effort (see ADR 0023).
   */
  readonly commandNamespace?: CommandNamespace;
}

interface HostSandboxState {
  readonly root: WorkspaceRoot;
  /** Whether the workspace is a temporary directory this sandbox created (and deletes). */
  readonly ownsWorkspace: boolean;
  /**
   * A private directory, deleted on close, for runCode scripts; its `tmp` is TMPDIR without an
   * inherited environment, and `/tmp` under bubblewrap.
   */
  readonly privateDir: string;
  /** Under bubblewrap: the arguments of the sandbox's namespace (restarted with them if it dies). */
  readonly bwrapArgs?: readonly string[];
}

/** How long `close()` waits for killed namespaces to end (they end within moments). */
const GROUPS_END_WAIT_MS = 5_000;

/** A `local` sandbox: host processes (optionally under bubblewrap) in a workspace directory. */
export class HostSandbox implements SandboxV1 {
  readonly id: string;
  readonly workspace: string;
  private readonly spec: LocalSandboxSpec;
  private readonly state: HostSandboxState;
  /**
   * Unisolated commands that may still have processes, by process group id: how to kill them all
   * (in a namespace) and the promise of their end.
   */
  private readonly groups = new Map<number, { readonly kill: () => void; readonly ended: Promise<void> }>();
  /** Without namespaces: the marker of every command run, as a descendant may outlive its group. */
  private readonly markers = new Set<string>();
  /** Commands still running, to wait for on close. */
  private readonly running = new Set<Promise<unknown>>();
  /** Aborts every running command on close. */
  private readonly closeController = new AbortController();
  private readonly unregister: () => void;
  private closing: Promise<void> | undefined;
  private scripts = 0;
  /** Under bubblewrap: the sandbox's namespace (see {@link Namespace}). */
  private namespace: Namespace | undefined;
  private readonly files: WorkspaceFiles;
  private starting: Promise<Namespace> | undefined;

  private constructor(
    private readonly config: HostSandboxConfig,
    state: HostSandboxState,
  ) {
    this.spec = config.spec;
    this.state = state;
    this.workspace = state.root.path;
    this.id = state.root.path;
    this.files = new WorkspaceFiles(state.root);
    // One abort listener per running command: any number may run at once.
    setMaxListeners(0, this.closeController.signal);
    this.unregister = registerExitCleanup({ cleanupSync: () => this.cleanupSync() });
  }

  /**
   * Creates the workspace (or a temporary one) and the private directory.
   *
   * @throws {SandboxError} `sandbox_open_failed` when a directory cannot be created.
   */
  static async open(config: HostSandboxConfig): Promise<HostSandbox> {
    const made: string[] = [];
    let handle: FileHandle | undefined;
    try {
      const privateDir = await realpath(await mkdtemp(join(tmpdir(), "openrath-local-run-")));
      made.push(privateDir);
      await mkdir(join(privateDir, "tmp"), { mode: 0o700 });
      let path: string;
      let ownsWorkspace: boolean;
      if (config.spec.workspace !== undefined) {
        path = config.spec.workspace;
        ownsWorkspace = false;
        try {
          await mkdir(path, { recursive: true });
        } catch (error) {
          if (errnoOf(error) !== "EEXIST") throw error;
        }
        if (!(await stat(path)).isDirectory()) {
          throw Object.assign(new Error(`${path} exists and is not a directory`), { code: "ENOTDIR" });
        }
      } else {
        path = await realpath(await mkdtemp(join(tmpdir(), "openrath-local-")));
        made.push(path);
        ownsWorkspace = true;
      }
      const real = await realpath(path);
      handle = await openFile(real, DIRECTORY_FLAGS);
      let args: string[] | undefined;
      if (config.spec.isolation === "bubblewrap") {
        const ids = sandboxIds(process.getuid?.() ?? 1000, process.getgid?.() ?? 1000);
        const accounts = accountFiles(ids, path);
        await writeFile(join(privateDir, "passwd"), accounts.passwd, { mode: 0o644 });
        await writeFile(join(privateDir, "group"), accounts.group, { mode: 0o644 });
        args = bwrapArgs({
          workspace: real,
          tmp: join(privateDir, "tmp"),
          passwd: join(privateDir, "passwd"),
          group: join(privateDir, "group"),
          ...ids,
          extraReadOnly: config.tools?.extraReadOnly ?? [],
        });
      }
      for (const dir of made) watched.dir(dir);
      const sandbox = new HostSandbox(config, {
        root: { path, real, handle },
        ownsWorkspace,
        privateDir,
        ...(args ? { bwrapArgs: args } : {}),
      });
      if (args) {
        try {
          await sandbox.ensureNamespace();
        } catch (error) {
          await sandbox.close();
          throw error;
        }
      }
      return sandbox;
    } catch (error) {
      if (SandboxError.isInstance(error, "sandbox_unavailable")) throw error;
      await handle?.close().catch(() => {});
      await Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true }).catch(() => {})));
      const where = config.spec.workspace ?? tmpdir();
      throw new SandboxError(
        "sandbox_open_failed",
        `Could not create the local sandbox's workspace in ${where}: ${(error as Error).message}. Pass a workspace directory you can write to.`,
        { cause: error, details: { workspace: where } },
      );
    }
  }

  async exec(command: string | readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
    this.ensureOpen();
    const checked = checkCommand(command);
    return this.run(typeof checked === "string" ? ["/bin/sh", "-c", checked] : [...checked], options);
  }

  readFile(path: string, options?: { readonly encoding?: "utf8" }): Promise<string>;
  readFile(path: string, options: { readonly encoding: "bytes" }): Promise<Uint8Array>;
  async readFile(
    path: string,
    options: { readonly encoding?: "utf8" | "bytes" } = {},
  ): Promise<string | Uint8Array> {
    this.ensureOpen();
    return options.encoding === "bytes"
      ? this.files.readFile(path, { encoding: "bytes" })
      : this.files.readFile(path, options as { readonly encoding?: "utf8" });
  }

  async writeFile(path: string, data: string | Uint8Array): Promise<{ readonly bytesWritten: number }> {
    this.ensureOpen();
    return this.files.writeFile(path, data);
  }

  async listFiles(path = ".", options: { readonly recursive?: boolean } = {}): Promise<FileEntry[]> {
    this.ensureOpen();
    return this.files.listFiles(path, options);
  }

  async exists(path: string): Promise<boolean> {
    this.ensureOpen();
    return this.files.exists(path);
  }

  async runCode(
    code: string,
    language: string,
    options: Omit<ExecOptions, "stdin"> = {},
  ): Promise<ExecResult> {
    this.ensureOpen();
    const bubblewrap = this.spec.isolation === "bubblewrap";
    const interpreters = bubblewrap ? this.config.isolatedInterpreters : this.config.interpreters;
    const interpreter = interpreters[language];
    if (!interpreter || !Object.hasOwn(interpreters, language)) {
      const known = Object.keys(interpreters);
      throw new SandboxError(
        "unsupported_language",
        `The local sandbox cannot run ${JSON.stringify(language)} code. Languages found on this host: ${known.join(", ")}. Install the interpreter before creating the backend, or use one of those.`,
        { details: { language, languages: known } },
      );
    }
    checkCode(code, language);
    // Under bubblewrap the script goes into the sandbox's own /tmp, the one host directory it sees there.
    const name = `.openrath-code-${++this.scripts}-${randomUUID()}${interpreter.extension}`;
    const script = bubblewrap ? join(this.state.privateDir, "tmp", name) : join(this.state.privateDir, name);
    // The sandbox controls its /tmp: a new file only (never through a link planted there, see ADR 0024).
    await writeFile(script, code, { mode: 0o600, flag: "wx" });
    try {
      const { stdin: _ignored, ...rest } = options as ExecOptions;
      return await this.run(
        [interpreter.command, ...interpreter.args, bubblewrap ? `/tmp/${name}` : script],
        rest,
      );
    } finally {
      await rm(script, { force: true });
    }
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closeController.abort(new SandboxError("sandbox_closed", "The local sandbox was closed."));
      this.killGroups();
      const namespace = this.namespace ?? (await this.starting?.catch(() => undefined));
      await namespace?.close();
      await Promise.allSettled([...this.running]);
      this.killGroups();
      await this.groupsEnded();
      const dirs = [this.state.privateDir, ...(this.state.ownsWorkspace ? [this.state.root.real] : [])];
      await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true, maxRetries: 3 })));
      for (const dir of dirs) watched.forgetDir(dir);
      await this.state.root.handle.close().catch(() => {});
      this.unregister();
    })();
    return this.closing;
  }

  /** Kills every process group and removes owned directories, synchronously (for process exit). */
  private cleanupSync(): void {
    this.namespace?.kill();
    this.killGroups();
    rmSync(this.state.privateDir, { recursive: true, force: true });
    if (this.state.ownsWorkspace) rmSync(this.state.root.real, { recursive: true, force: true });
  }

  /**
   * Kills what every unisolated command left: each namespace (forgotten when its end is seen), or,
   * without namespaces, each group and every process with a marker, and their descendants.
   */
  private killGroups(): void {
    if (this.config.commandNamespace) {
      for (const group of this.groups.values()) group.kill();
      return;
    }
    killProcessTree([...this.groups.keys()], this.markers);
    for (const pgid of this.groups.keys()) watched.forgetGroup(pgid);
    this.groups.clear();
  }

  /** Waits (at most a few seconds) until every killed namespace has ended: then none of its processes is left. */
  private async groupsEnded(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([...this.groups.values()].map((group) => group.ended)),
      new Promise((resolve) => {
        timer = setTimeout(resolve, GROUPS_END_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
  }

  /** The sandbox's namespace, started (again, after a crash) when needed. */
  private ensureNamespace(): Promise<Namespace> {
    if (this.namespace && !this.namespace.isDead) return Promise.resolve(this.namespace);
    const tools = this.config.tools;
    if (!tools || !this.state.bwrapArgs) {
      return Promise.reject(
        new SandboxError("sandbox_unavailable", "bubblewrap was not checked before open."),
      );
    }
    this.starting ??= Namespace.start({
      bwrapPath: this.config.bwrapPath,
      args: this.state.bwrapArgs,
      node: tools.node,
      unshare: tools.unshare,
    }).then(
      (namespace) => {
        this.starting = undefined;
        this.namespace = namespace;
        if (this.closing) namespace.kill();
        return namespace;
      },
      (error: unknown) => {
        this.starting = undefined;
        throw error;
      },
    );
    return this.starting;
  }

  /** The workspace root as a working directory, refused (`file_not_found`) once it is gone. */
  private async rootDirectory(): Promise<WorkspacePath> {
    try {
      if (!(await stat(this.state.root.real)).isDirectory()) throw fileError("not_a_directory", ".");
    } catch (error) {
      throw mapFsError(error, ".", "file_not_found");
    }
    return { rel: ".", real: this.state.root.real };
  }

  private ensureOpen(): void {
    if (this.closing) {
      throw new SandboxError(
        "sandbox_closed",
        `The local sandbox ${this.id} was closed. Open a new one (or place the session again) to keep working.`,
        { details: { id: this.id } },
      );
    }
  }

  private async run(argv: string[], options: ExecOptions): Promise<ExecResult> {
    if (options.signal?.aborted) throw abortedBeforeStart(options.signal);
    const timeoutMs = resolveExecTimeout(options.timeoutMs, this.spec.timeoutMs);
    const execEnv = options.env === undefined ? undefined : checkEnv(options.env);
    // The root needs no walk (its real path is known): the common case stays cheap.
    const { rel: cwdRel, real: cwd } =
      options.cwd === undefined ? await this.rootDirectory() : await this.files.directory(options.cwd);
    this.ensureOpen();

    const bubblewrap = this.spec.isolation === "bubblewrap";
    const env = buildEnv({
      isolation: this.spec.isolation ?? "none",
      inheritEnv: this.spec.inheritEnv ?? !bubblewrap,
      host: process.env,
      workspace: this.workspace,
      tmpdir: join(this.state.privateDir, "tmp"),
      ...(this.config.tools?.path ? { isolatedPath: this.config.tools.path } : {}),
      ...(this.spec.env ? { spec: this.spec.env } : {}),
      ...(execEnv ? { exec: execEnv } : {}),
    });
    // The process starts in the real directory; PWD gives the shell the path as the workspace names it.
    if (!options.env?.PWD && !this.spec.env?.PWD)
      env.PWD = cwdRel === "." ? this.workspace : join(this.workspace, cwdRel);
    const signal = options.signal
      ? AbortSignal.any([options.signal, this.closeController.signal])
      : this.closeController.signal;
    const common = {
      env,
      ...(options.stdin !== undefined ? { stdin: options.stdin } : {}),
      timeoutMs,
      signal,
      maxOutputBytes: options.maxOutputBytes ?? this.config.maxOutputBytes,
      ...(options.onStdout ? { onStdout: options.onStdout } : {}),
      ...(options.onStderr ? { onStderr: options.onStderr } : {}),
    };

    let run: Promise<ExecResult>;
    if (bubblewrap) {
      const namespace = await this.ensureNamespace();
      this.ensureOpen();
      run = namespace.run({ argv, cwd, ...common });
    } else {
      const marker = randomUUID();
      const namespace = this.config.commandNamespace;
      if (!namespace) this.markers.add(marker);
      let ended = () => {};
      const forget = (pgid: number) => {
        this.groups.delete(pgid);
        watched.forgetGroup(pgid);
        ended();
      };
      run = runProcess({
        file: argv[0]!,
        args: argv.slice(1),
        cwd,
        ...common,
        env: { ...env, [EXEC_MARKER]: marker },
        ...(namespace ? { namespace } : { marker }),
        onStart: (pgid, kill) => {
          const end = new Promise<void>((resolve) => {
            ended = resolve;
          });
          this.groups.set(pgid, { kill, ended: end });
          watched.group(pgid);
        },
        onEnd: (pgid) => {
          // A namespace ends with its last process. Without one, members that outlive the leader
          // (background jobs) are killed on close, and an empty group is forgotten.
          if (namespace) return forget(pgid);
          try {
            process.kill(-pgid, 0);
          } catch (error) {
            if (errnoOf(error) === "ESRCH") forget(pgid);
          }
        },
      });
    }
    this.running.add(run);
    try {
      return await run;
    } catch (error) {
      if (
        SandboxError.isInstance(error, "aborted") &&
        this.closeController.signal.aborted &&
        !options.signal?.aborted
      ) {
        throw new SandboxError(
          "sandbox_closed",
          "The local sandbox was closed while the command ran; every process it started was killed.",
          {
            cause: error,
            details: error.details,
          },
        );
      }
      throw error;
    } finally {
      this.running.delete(run);
    }
  }
}
