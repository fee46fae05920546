import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import {
  chmodSync,
  closeSync,
  type Dirent,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { cpus, freemem, totalmem } from "node:os";
import { posix } from "node:path";
import { spawnInSandbox } from "./bwrap.js";
import { ContainerProcess, FakeContainer } from "./fake-container.js";
import { globToRegExp, parseMultipart, readBody, sendEmpty, sendJson, sendText } from "./fake-http.js";
import { fileInfo, type Mount, SandboxFs } from "./sandbox-fs.js";

/** A stream event as execd writes it: zero/empty fields are left out. */
export interface StreamEvent {
  type: string;
  text?: string;
  execution_count?: number;
  execution_time?: number;
  timestamp: number;
  results?: Record<string, unknown>;
  error?: { ename: string; evalue: string; traceback: string[] };
}

/** How the next streaming response should break (the control hook's "drop the stream"). */
export interface StreamDrop {
  /** Break after this many events were written; default: right before the terminal event. */
  readonly afterEvents?: number;
  /** `reset` destroys the socket (the default); `end` ends the response cleanly, without a terminal event. */
  readonly mode?: "reset" | "end";
}

/** What the fake's control hook can do to an execd request. */
export interface ExecdHooks {
  /** A scripted failure for this request, if any (status + body, or a socket reset). */
  fault(method: string, path: string): { status: number; body?: unknown } | "reset" | undefined;
  /** Takes the next scripted stream drop, if any. */
  takeStreamDrop(route: "/command" | "/code"): StreamDrop | undefined;
}

/** Options of one sandbox's {@link FakeExecd}. */
export interface FakeExecdOptions {
  readonly mounts: readonly Mount[];
  /** Environment of every process (the sandbox's `env` from create on top of a base environment). */
  readonly env: Record<string, string>;
  /** Required `X-EXECD-ACCESS-TOKEN`, when set. */
  readonly accessToken?: string;
  /** Headers every call must carry (what the lifecycle server hands out with the endpoint). */
  readonly requiredHeaders?: Record<string, string>;
  /** Serve `GET /directories/list` (execd ≥ v1.0.19); `false` answers it with gin's 404. */
  readonly directoriesList: boolean;
  /** How long a stream stays open after its terminal event (execd: ~1 s). */
  readonly gracefulDelayMs: number;
  /** Interval of `ping` keep-alive events (execd: 3 s, the first right after `init`). */
  readonly pingIntervalMs: number;
  /** Pings that fail before the first success. */
  pingFailures: number;
  /** How a failing ping fails: a 503, or a reset connection (what a not-yet-listening execd gives). */
  pingFailureMode: "status" | "reset";
  readonly hooks: ExecdHooks;
}

interface CommandRecord {
  readonly id: string;
  readonly content: string;
  readonly background: boolean;
  readonly startedAt: Date;
  child?: ChildProcess | ContainerProcess;
  running: boolean;
  exitCode: number | null;
  error?: string;
  finishedAt: Date | null;
  killedBy?: "timeout" | "interrupt";
  /** Background commands: stdout and stderr, combined. */
  output: Buffer[];
  killTimer?: NodeJS.Timeout;
}

interface CodeContext {
  readonly id: string;
  readonly language: string;
  readonly cwd?: string;
  count: number;
  /** The context's kernel: one long-lived Python process, so state persists between cells. */
  kernel?: Kernel;
  /** The cell running now, if any. */
  busy?: { interrupted: boolean };
}

/** A fake kernel: the driver process and the handler of the cell that runs in it. */
interface Kernel {
  readonly child: ChildProcess;
  /** Receives the driver's messages for the running cell. */
  onMessage?: (message: KernelMessage) => void;
  /** Called when the process dies. */
  onExit?: (code: number | null) => void;
  exited: boolean;
}

type KernelMessage =
  | { type: "stdout" | "stderr"; text: string }
  | { type: "done"; text?: string; error?: { ename: string; evalue: string; traceback: string[] } };

const GO_SIGNALS: Record<string, string> = {
  SIGKILL: "killed",
  SIGTERM: "terminated",
  SIGINT: "interrupt",
  SIGHUP: "hangup",
  SIGQUIT: "quit",
  SIGABRT: "aborted",
  SIGSEGV: "segmentation fault",
  SIGPIPE: "broken pipe",
  SIGALRM: "alarm clock",
  SIGUSR1: "user defined signal 1",
  SIGUSR2: "user defined signal 2",
  SIGBUS: "bus error",
  SIGFPE: "floating point exception",
  SIGILL: "illegal instruction",
};

const SSE_HEADERS = {
  "Content-Type": "text/event-stream",
  "Cache-Control": "no-cache",
  Connection: "keep-alive",
  "X-Accel-Buffering": "no",
};

/**
 * A tiny kernel: runs cells sent as JSON lines on stdin in one persistent namespace (state
 * survives between cells, as in Jupyter), reports output, the last expression's value and errors
 * as JSON lines on fd 3, and turns an `interrupt` message into a KeyboardInterrupt in the cell.
 */
const PYTHON_KERNEL = `
import ast, json, os, queue, signal, sys, threading, traceback
out = os.fdopen(3, "w", buffering=1)
lock = threading.Lock()
state = {"running": False}
def send(msg):
    with lock:
        out.write(json.dumps(msg) + "\\n")
        out.flush()
class Stream:
    encoding = "utf-8"
    def __init__(self, name):
        self.name = name
    def write(self, text):
        if text:
            send({"type": self.name, "text": text})
        return len(text)
    def flush(self):
        pass
    def isatty(self):
        return False
def on_sigint(signum, frame):
    if state["running"]:
        raise KeyboardInterrupt
signal.signal(signal.SIGINT, on_sigint)
control = sys.stdin
sys.stdin = open(os.devnull)
cells = queue.Queue()
def reader():
    for line in control:
        msg = json.loads(line)
        if msg.get("op") == "interrupt":
            if state["running"]:
                os.kill(os.getpid(), signal.SIGINT)
        else:
            cells.put(msg)
    cells.put(None)
threading.Thread(target=reader, daemon=True).start()
namespace = {"__name__": "__main__", "__builtins__": __builtins__}
while True:
    msg = cells.get()
    if msg is None:
        break
    result = {"type": "done"}
    sys.stdout, sys.stderr = Stream("stdout"), Stream("stderr")
    state["running"] = True
    try:
        tree = ast.parse(msg["code"], "<cell>", "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, "<cell>", "exec"), namespace)
        if last is not None:
            value = eval(compile(last, "<cell>", "eval"), namespace)
            if value is not None:
                result["text"] = repr(value)
    except BaseException as e:
        lines = traceback.format_exception(type(e), e, e.__traceback__.tb_next)
        result["error"] = {"ename": type(e).__name__, "evalue": str(e), "traceback": [l.rstrip("\\n") for l in lines]}
    finally:
        state["running"] = False
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    send(result)
`;

function execdError(res: ServerResponse, status: number, code: string, message?: string): void {
  sendJson(res, status, message === undefined ? { code } : { code, message });
}

/** Node's `ENOENT`-style error → execd's `handleFileError`: 404 `FILE_NOT_FOUND` or 500 `RUNTIME_ERROR`. */
function fileError(res: ServerResponse, error: unknown): void {
  const e = error as NodeJS.ErrnoException;
  if (e.code === "ENOENT") execdError(res, 404, "FILE_NOT_FOUND", `file not found. ${e.message}`);
  else execdError(res, 500, "RUNTIME_ERROR", `error accessing file: ${e.message}`);
}

/** Splits tailed output the way execd's `readFromPos` does: one event per line, terminators stripped. */
/** How much output waits in memory for the next poll before it is read at once. */
const TAIL_LIMIT = 1024 * 1024;

class LineTail {
  private pending = Buffer.alloc(0);

  constructor(private readonly emit: (text: string) => void) {}

  push(chunk: Buffer): void {
    this.pending = Buffer.concat([this.pending, chunk]);
    // Execd's command writes to a log file that the next poll reads; here the output waits in
    // memory, so more than TAIL_LIMIT of it is read at once, as an early poll would.
    if (this.pending.length > TAIL_LIMIT) this.tick(false);
  }

  /** One poll of the log file; at the end the incomplete last line is flushed too. */
  tick(flushIncomplete: boolean): void {
    const data = this.pending;
    let lineStart = 0;
    let lastWasCR = false;
    for (let i = 0; i < data.length; i++) {
      const b = data[i];
      if (b === 0x0a || b === 0x0d) {
        if (i > lineStart) this.emit(data.subarray(lineStart, i).toString("utf8"));
        else if (!(b === 0x0a && lastWasCR)) this.emit("\n");
        lastWasCR = b === 0x0d;
        lineStart = i + 1;
        continue;
      }
      lastWasCR = false;
    }
    const rest = data.subarray(lineStart);
    if (flushIncomplete && rest.length > 0) {
      this.emit(rest.toString("utf8"));
      this.pending = Buffer.alloc(0);
    } else {
      this.pending = Buffer.from(rest);
    }
  }
}

/** Writes `{json}\n\n` frames, honouring a scripted drop and a client that went away. */
class EventWriter {
  private written = 0;
  private gone = false;
  private pingTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly drop: StreamDrop | undefined,
    private readonly pingIntervalMs: number,
  ) {
    res.on("close", () => {
      this.gone = true;
      this.stopPing();
    });
  }

  start(): void {
    this.res.writeHead(200, SSE_HEADERS);
    this.res.flushHeaders();
  }

  write(event: Omit<StreamEvent, "timestamp">, terminal = false): void {
    if (this.gone) return;
    if (
      this.drop &&
      (this.drop.afterEvents === undefined ? terminal : this.written >= this.drop.afterEvents)
    ) {
      this.gone = true;
      this.stopPing();
      if (this.drop.mode === "end") this.res.end();
      else this.res.socket?.destroy();
      return;
    }
    if (!this.res.write(`${JSON.stringify({ ...event, timestamp: Date.now() })}\n\n`))
      this.onBackpressure?.();
    this.written++;
  }

  /** Called when the client reads slower than the command writes (TCP backpressure, as execd has). */
  onBackpressure: (() => void) | undefined;

  /** Resolves once the response can take more. */
  drained(): Promise<void> {
    this.draining ??= new Promise<void>((resolve) => {
      const done = () => {
        this.res.off("drain", done);
        this.res.off("close", done);
        this.draining = undefined;
        resolve();
      };
      if (this.gone || !this.res.writableNeedDrain) done();
      else {
        this.res.on("drain", done);
        this.res.on("close", done);
      }
    });
    return this.draining;
  }

  private draining: Promise<void> | undefined;

  /** Keep-alive pings: the first right away (k8s `wait.Until` runs at once), then every interval. */
  startPing(): void {
    const ping = () => this.write({ type: "ping", text: "pong" });
    ping();
    this.pingTimer = setInterval(ping, this.pingIntervalMs);
    this.pingTimer.unref();
  }

  stopPing(): void {
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.pingTimer = undefined;
  }

  end(delayMs: number): void {
    this.stopPing();
    if (this.gone) return;
    const timer = setTimeout(() => {
      if (!this.gone) this.res.end();
    }, delayMs);
    timer.unref();
  }
}

function terminalOf(record: CommandRecord, code: number | null, signal: NodeJS.Signals | null) {
  if (signal) {
    const name = record.killedBy === "timeout" ? "killed" : (GO_SIGNALS[signal] ?? signal.toLowerCase());
    return { exitCode: -1, error: `signal: ${name}` };
  }
  if (code === 0) return { exitCode: 0 };
  return { exitCode: code ?? 1, error: `exit status ${code ?? 1}` };
}

/**
 * One sandbox's execd: the routes of opensandbox-group/OpenSandbox:components/execd/pkg/web/router.go
 * that OpenRath and the SDK use, with the exact status codes, error bodies and stream framing of
 * backends-wire.md §1.6. Commands really run, in bubblewrap, against the sandbox's directories.
 */
export class FakeExecd {
  readonly fs: SandboxFs;
  readonly commands = new Map<string, CommandRecord>();
  readonly contexts = new Map<string, CodeContext>();
  /** Ids of commands interrupted through `DELETE /command`, in order. */
  readonly interrupted: string[] = [];
  private readonly defaultContexts = new Map<string, string>();
  private closed = false;
  /** The sandbox's shared namespace, where its commands run (started with the first). */
  private container: FakeContainer | undefined;

  constructor(readonly options: FakeExecdOptions) {
    this.fs = new SandboxFs(options.mounts);
  }

  /** Commands and code cells still running. */
  running(): number {
    let n = 0;
    for (const record of this.commands.values()) if (record.running) n++;
    for (const context of this.contexts.values()) if (context.busy) n++;
    return n;
  }

  /** Kills everything (the sandbox was deleted); resolves once the processes are gone. */
  async killAll() {
    this.closed = true;
    const children: (ChildProcess | ContainerProcess)[] = [];
    for (const record of this.commands.values())
      if (record.running && record.child) children.push(record.child);
    for (const context of this.contexts.values()) {
      if (context.kernel && !context.kernel.exited) children.push(context.kernel.child);
    }
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            const timer = setTimeout(resolve, 2000);
            child.once("close", () => {
              clearTimeout(timer);
              resolve();
            });
            killGroup(child, "SIGKILL");
          }),
      ),
    );
    await this.container?.close();
  }

  /** Handles one request; `path` is relative to execd's root (any `/proxy/44772` prefix removed). */
  async handle(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams) {
    const token = this.options.accessToken;
    if (token !== undefined) {
      const given = req.headers["x-execd-access-token"];
      if (given !== token) {
        sendJson(res, 401, { error: "Unauthorized: invalid or missing header X-EXECD-ACCESS-TOKEN" });
        return;
      }
    }
    for (const [name, value] of Object.entries(this.options.requiredHeaders ?? {})) {
      if (req.headers[name.toLowerCase()] !== value) {
        sendJson(res, 401, { code: "UNAUTHORIZED", message: `missing or wrong header ${name}` });
        return;
      }
    }
    const method = req.method ?? "GET";
    const fault = this.options.hooks.fault(method, path);
    if (fault === "reset") {
      req.socket.destroy();
      return;
    }
    if (fault) {
      sendJson(res, fault.status, fault.body ?? { code: "RUNTIME_ERROR", message: "injected failure" });
      return;
    }
    const route = `${method} ${path}`;
    const commandStatus = /^GET \/command\/status\/([^/]+)$/.exec(route);
    const commandLogs = /^GET \/command\/([^/]+)\/logs$/.exec(route);
    const contextById = /^(GET|DELETE) \/code\/contexts\/([^/]+)$/.exec(route);
    try {
      if (route === "GET /ping") return this.ping(req, res);
      if (route === "POST /command") return await this.runCommand(req, res);
      if (route === "DELETE /command") return this.interruptCommand(res, query);
      if (commandStatus) return this.commandStatus(res, decodeURIComponent(commandStatus[1]!));
      if (commandLogs) return this.commandLogs(res, decodeURIComponent(commandLogs[1]!), query);
      if (route === "POST /code/context") return await this.createContext(req, res);
      if (route === "GET /code/contexts") return this.listContexts(res, query);
      if (route === "DELETE /code/contexts") return this.deleteContexts(res, query);
      if (contextById) return this.contextById(res, contextById[1]!, decodeURIComponent(contextById[2]!));
      if (route === "POST /code") return await this.runCode(req, res);
      if (route === "DELETE /code") return this.interruptCode(res, query);
      if (route === "POST /files/upload") return await this.upload(req, res);
      if (route === "GET /files/download") return this.download(req, res, query);
      if (route === "GET /files/info") return this.info(res, query);
      if (route === "GET /files/search") return this.search(res, query);
      if (route === "DELETE /files") return this.removeFiles(res, query);
      if (route === "POST /files/mv") return await this.move(req, res);
      if (route === "POST /files/replace") return await this.replace(req, res, query);
      if (route === "POST /files/permissions") return await this.permissions(req, res);
      if (route === "GET /directories/list" && this.options.directoriesList)
        return this.listDirectory(res, query);
      if (route === "POST /directories") return await this.makeDirs(req, res);
      if (route === "DELETE /directories") return this.removeDirs(res, query);
      if (route === "GET /metrics") return this.metrics(res);
      sendText(res, 404, "404 page not found");
    } catch (error) {
      if (!res.headersSent) execdError(res, 500, "RUNTIME_ERROR", (error as Error).message);
      else res.destroy();
    }
  }

  private ping(req: IncomingMessage, res: ServerResponse) {
    if (this.options.pingFailures > 0) {
      this.options.pingFailures--;
      if (this.options.pingFailureMode === "reset") req.socket.destroy();
      else sendEmpty(res, 503);
      return;
    }
    sendEmpty(res, 200);
  }

  private async jsonBody(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
    const body = await readBody(req);
    try {
      return JSON.parse(body.toString("utf8"));
    } catch (error) {
      execdError(
        res,
        400,
        "INVALID_REQUEST_BODY",
        `error parsing request, MAYBE invalid body format. ${(error as Error).message}`,
      );
      return undefined;
    }
  }

  private environment(extra: unknown): Record<string, string> {
    const env = { ...this.options.env };
    if (extra && typeof extra === "object") {
      for (const [k, v] of Object.entries(extra)) if (typeof v === "string") env[k] = v;
    }
    return env;
  }

  /** `cwd` checks of `POST /command`: it must exist and be a directory. */
  private checkCwd(cwd: string): string | undefined {
    try {
      const { stats } = this.fs.stat(cwd);
      return stats.isDirectory() ? undefined : `working directory is not a directory: ${cwd}`;
    } catch {
      return `working directory does not exist: ${cwd}`;
    }
  }

  private async runCommand(req: IncomingMessage, res: ServerResponse) {
    const body = (await this.jsonBody(req, res)) as Record<string, unknown> | undefined;
    if (body === undefined) return;
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      return execdError(
        res,
        400,
        "INVALID_REQUEST_BODY",
        "error parsing request, MAYBE invalid body format.",
      );
    }
    const { command, cwd, background, timeout, uid, gid, envs } = body;
    if (typeof command !== "string" || command === "") {
      return execdError(
        res,
        400,
        "INVALID_REQUEST_BODY",
        "invalid request, validation error Key: 'RunCommandRequest.Command' Error:Field validation for 'Command' failed on the 'required' tag",
      );
    }
    if (timeout !== undefined && (typeof timeout !== "number" || timeout < 1) && timeout !== 0) {
      return execdError(
        res,
        400,
        "INVALID_REQUEST_BODY",
        "invalid request, validation error Key: 'RunCommandRequest.TimeoutMs' Error:Field validation for 'TimeoutMs' failed on the 'gte' tag",
      );
    }
    if (gid !== undefined && uid === undefined) {
      return execdError(
        res,
        400,
        "INVALID_REQUEST_BODY",
        "invalid request, validation error gid requires uid",
      );
    }
    const workDir = typeof cwd === "string" && cwd !== "" ? cwd : "/";
    const cwdProblem = this.checkCwd(workDir);
    if (cwdProblem) return execdError(res, 400, "INVALID_REQUEST_BODY", cwdProblem);
    const env = this.environment(envs);
    const timeoutMs = typeof timeout === "number" && timeout > 0 ? timeout : undefined;
    if (background === true) return this.runBackground(res, command, workDir, env, timeoutMs);
    this.runForeground(res, command, workDir, env, timeoutMs, this.options.hooks.takeStreamDrop("/command"));
  }

  private spawnCommand(record: CommandRecord, command: string, cwd: string, env: Record<string, string>) {
    // Every command of a sandbox shares one namespace, as in a container: see FakeContainer.
    this.container ??= new FakeContainer(this.options.mounts, this.options.env);
    const child = this.container.spawn(["bash", "-c", command], { cwd, env });
    record.child = child;
    this.commands.set(record.id, record);
    return child;
  }

  private finish(record: CommandRecord, code: number | null, signal: NodeJS.Signals | null) {
    const outcome = terminalOf(record, code, signal);
    record.running = false;
    record.exitCode = outcome.exitCode;
    if (outcome.error) record.error = outcome.error;
    record.finishedAt = new Date();
    if (record.killTimer) clearTimeout(record.killTimer);
    return outcome;
  }

  private runForeground(
    res: ServerResponse,
    command: string,
    cwd: string,
    env: Record<string, string>,
    timeoutMs: number | undefined,
    drop: StreamDrop | undefined,
  ) {
    const record: CommandRecord = {
      id: randomUUID(),
      content: command,
      background: false,
      startedAt: new Date(),
      running: true,
      exitCode: null,
      finishedAt: null,
      output: [],
    };
    const writer = new EventWriter(res, drop, this.options.pingIntervalMs);
    writer.start();
    const child = this.spawnCommand(record, command, cwd, env);
    writer.write({ type: "init", text: record.id });
    writer.startPing();
    const stdout = new LineTail((text) => writer.write({ type: "stdout", text }));
    const stderr = new LineTail((text) => writer.write({ type: "stderr", text }));
    child.stdout?.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk));
    // A slow client slows the command down instead of filling this process's memory.
    writer.onBackpressure = () => {
      child.stdout?.pause();
      child.stderr?.pause();
      void writer.drained().then(() => {
        child.stdout?.resume();
        child.stderr?.resume();
      });
    };
    const tick = setInterval(() => {
      stdout.tick(false);
      stderr.tick(false);
    }, 100);
    if (timeoutMs !== undefined) {
      record.killTimer = setTimeout(() => {
        record.killedBy = "timeout";
        killGroup(child, "SIGKILL");
      }, timeoutMs);
    }
    let done = false;
    const complete = (code: number | null, signal: NodeJS.Signals | null, startError?: Error) => {
      if (done) return;
      done = true;
      clearInterval(tick);
      stdout.tick(true);
      stderr.tick(true);
      if (startError) {
        this.finish(record, 1, null);
        writer.write(
          {
            type: "error",
            error: { ename: "CommandExecError", evalue: startError.message, traceback: [startError.message] },
          },
          true,
        );
      } else {
        const outcome = this.finish(record, code, signal);
        if (outcome.error) {
          writer.write(
            {
              type: "error",
              error: {
                ename: "CommandExecError",
                evalue: String(outcome.exitCode),
                traceback: [outcome.error],
              },
            },
            true,
          );
        } else {
          writer.write(
            { type: "execution_complete", execution_time: Date.now() - record.startedAt.getTime() },
            true,
          );
        }
      }
      writer.end(this.options.gracefulDelayMs);
    };
    child.on("error", (error) => complete(null, null, error));
    child.on("close", (code, signal) => complete(code, signal));
  }

  private runBackground(
    res: ServerResponse,
    command: string,
    cwd: string,
    env: Record<string, string>,
    timeoutMs: number | undefined,
  ) {
    const record: CommandRecord = {
      id: randomUUID(),
      content: command,
      background: true,
      startedAt: new Date(),
      running: true,
      exitCode: null,
      finishedAt: null,
      output: [],
    };
    const writer = new EventWriter(res, undefined, this.options.pingIntervalMs);
    writer.start();
    const child = this.spawnCommand(record, command, cwd, env);
    child.stdout?.on("data", (chunk: Buffer) => record.output.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => record.output.push(chunk));
    if (timeoutMs !== undefined) {
      record.killTimer = setTimeout(() => {
        record.killedBy = "timeout";
        killGroup(child, "SIGKILL");
      }, timeoutMs);
    }
    child.on("error", (error) => {
      record.running = false;
      record.exitCode = 255;
      record.error = error.message;
      record.finishedAt = new Date();
    });
    child.on("close", (code, signal) => {
      if (record.running) this.finish(record, code, signal);
    });
    writer.write({ type: "init", text: record.id });
    writer.write(
      { type: "execution_complete", execution_time: Date.now() - record.startedAt.getTime() },
      true,
    );
    writer.end(this.options.gracefulDelayMs);
  }

  private interruptCommand(res: ServerResponse, query: URLSearchParams) {
    const id = query.get("id");
    if (!id) return execdError(res, 400, "MISSING_QUERY", "missing query parameter 'id'");
    const record = this.commands.get(id);
    if (!record)
      return execdError(res, 500, "RUNTIME_ERROR", `error interrupting command ${id}: no such session`);
    if (!record.running || !record.child) {
      return execdError(res, 500, "RUNTIME_ERROR", `error interrupting command ${id}: ${id} is not running`);
    }
    this.interrupted.push(id);
    record.killedBy = "interrupt";
    const child = record.child;
    // As execd's killPid: SIGTERM to the process group, probe it for up to 3 s, then SIGKILL, and
    // only then answer. Only the group: a descendant that left it (setsid) is not signalled.
    killGroup(child, "SIGTERM");
    void (async () => {
      // The fake's group is bubblewrap's, whose sandbox may outlive a SIGTERM to it: "gone" is the
      // command having ended, as execd's probe of the group means.
      const gone = () => !record.running;
      const deadline = Date.now() + 3000;
      while (!gone() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      if (!gone()) killGroup(child, "SIGKILL");
      sendEmpty(res, 200);
    })();
  }

  private commandStatus(res: ServerResponse, id: string) {
    const record = this.commands.get(id);
    if (!record) return execdError(res, 404, "INVALID_REQUEST_BODY", `command ${id} not found`);
    sendJson(res, 200, {
      id: record.id,
      content: record.content,
      running: record.running,
      // Go's omitempty on pointers: absent (not null) until the command finished.
      ...(record.exitCode !== null ? { exit_code: record.exitCode } : {}),
      ...(record.error ? { error: record.error } : {}),
      started_at: record.startedAt.toISOString(),
      ...(record.finishedAt ? { finished_at: record.finishedAt.toISOString() } : {}),
    });
  }

  private commandLogs(res: ServerResponse, id: string, query: URLSearchParams) {
    const record = this.commands.get(id);
    if (!record) return execdError(res, 400, "INVALID_REQUEST_BODY", `command ${id} not found`);
    const text = Buffer.concat(record.output).toString("utf8");
    const lines = text.split(/(?<=\n)/).filter((l) => l !== "");
    // A partial last line is only served once the command finished; until then it may still grow.
    const complete =
      record.running && lines.length > 0 && !lines[lines.length - 1]!.endsWith("\n") ? -1 : undefined;
    const available = complete === -1 ? lines.slice(0, -1) : lines;
    const cursor = Math.max(0, Number.parseInt(query.get("cursor") ?? "0", 10) || 0);
    sendText(res, 200, available.slice(cursor).join(""), {
      "EXECD-COMMANDS-TAIL-CURSOR": String(available.length),
    });
  }

  private async createContext(req: IncomingMessage, res: ServerResponse) {
    const body = (await this.jsonBody(req, res)) as { language?: unknown; cwd?: unknown } | undefined;
    if (body === undefined) return;
    const language = typeof body?.language === "string" ? body.language : "";
    if (language !== "python") {
      return execdError(
        res,
        500,
        "RUNTIME_ERROR",
        `error creating context: unsupported language ${language}`,
      );
    }
    const context: CodeContext = {
      id: randomUUID(),
      language,
      count: 0,
      ...(typeof body.cwd === "string" ? { cwd: body.cwd } : {}),
    };
    this.contexts.set(context.id, context);
    // The request is echoed back (omitempty fields left out), as execd's CodeContext embeds it.
    sendJson(res, 200, { id: context.id, language, ...(context.cwd ? { cwd: context.cwd } : {}) });
  }

  private listContexts(res: ServerResponse, query: URLSearchParams) {
    const language = query.get("language");
    sendJson(
      res,
      200,
      [...this.contexts.values()]
        .filter((c) => !language || c.language === language)
        .map((c) => ({ id: c.id, language: c.language })),
    );
  }

  private deleteContexts(res: ServerResponse, query: URLSearchParams) {
    const language = query.get("language");
    for (const [id, context] of this.contexts) {
      if (!language || context.language === language) {
        if (context.kernel) killGroup(context.kernel.child, "SIGKILL");
        this.contexts.delete(id);
      }
    }
    sendEmpty(res, 200);
  }

  private contextById(res: ServerResponse, method: string, id: string) {
    const context = this.contexts.get(id);
    if (!context) return execdError(res, 404, "CONTEXT_NOT_FOUND", `context ${id} not found`);
    if (method === "GET") return sendJson(res, 200, { id: context.id, language: context.language });
    if (context.kernel) killGroup(context.kernel.child, "SIGKILL");
    this.contexts.delete(id);
    sendEmpty(res, 200);
  }

  private async runCode(req: IncomingMessage, res: ServerResponse) {
    const body = (await this.jsonBody(req, res)) as Record<string, unknown> | undefined;
    if (body === undefined) return;
    const code = body?.code;
    if (typeof code !== "string" || code === "") {
      return execdError(
        res,
        400,
        "INVALID_REQUEST_BODY",
        "invalid request, validation error Key: 'RunCodeRequest.Code' Error:Field validation for 'Code' failed on the 'required' tag",
      );
    }
    const requested = (body.context ?? {}) as { id?: unknown; language?: unknown; cwd?: unknown };
    const id = typeof requested.id === "string" && requested.id !== "" ? requested.id : undefined;
    const language = typeof requested.language === "string" ? requested.language : "";
    let context: CodeContext | undefined;
    if (id !== undefined) {
      context = this.contexts.get(id);
      if (!context)
        return execdError(res, 500, "RUNTIME_ERROR", `error running code: context ${id} not found`);
    } else if (language === "") {
      const cwd = typeof requested.cwd === "string" && requested.cwd !== "" ? requested.cwd : "/";
      const cwdProblem = this.checkCwd(cwd);
      if (cwdProblem) return execdError(res, 400, "INVALID_REQUEST_BODY", cwdProblem);
      return this.runForeground(res, code, cwd, this.environment(undefined), undefined, undefined);
    } else if (language === "python") {
      let defaultId = this.defaultContexts.get(language);
      if (!defaultId || !this.contexts.has(defaultId)) {
        defaultId = randomUUID();
        this.contexts.set(defaultId, { id: defaultId, language, count: 0 });
        this.defaultContexts.set(language, defaultId);
      }
      context = this.contexts.get(defaultId)!;
    } else {
      return execdError(res, 500, "RUNTIME_ERROR", `error running code: unsupported language ${language}`);
    }
    if (context.busy) return execdError(res, 500, "RUNTIME_ERROR", "error running code: session is busy");
    this.runPython(res, context, code, this.options.hooks.takeStreamDrop("/code"));
  }

  /** The context's kernel process, started on first use. */
  private kernel(context: CodeContext): Kernel {
    if (context.kernel && !context.kernel.exited) return context.kernel;
    const cwd = context.cwd && this.checkCwd(context.cwd) === undefined ? context.cwd : "/";
    const child = spawnInSandbox(["python3", "-u", "-c", PYTHON_KERNEL], {
      mounts: this.options.mounts,
      cwd,
      env: this.options.env,
      stdin: "pipe",
      extraFds: 1,
    });
    const kernel: Kernel = { child, exited: false };
    child.stdin?.on("error", () => undefined);
    let pending = "";
    (child.stdio[3] as NodeJS.ReadableStream | null)?.on("data", (chunk: Buffer) => {
      pending += chunk.toString("utf8");
      let newline = pending.indexOf("\n");
      while (newline >= 0) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        try {
          kernel.onMessage?.(JSON.parse(line) as KernelMessage);
        } catch {
          // A torn line from a dying kernel.
        }
        newline = pending.indexOf("\n");
      }
    });
    // Output of subprocesses goes to the process's own stdout and stderr.
    child.stdout?.on("data", (chunk: Buffer) =>
      kernel.onMessage?.({ type: "stdout", text: chunk.toString("utf8") }),
    );
    child.stderr?.on("data", (chunk: Buffer) =>
      kernel.onMessage?.({ type: "stderr", text: chunk.toString("utf8") }),
    );
    const died = (code: number | null) => {
      if (kernel.exited) return;
      kernel.exited = true;
      kernel.onExit?.(code);
    };
    child.on("error", () => died(null));
    child.on("close", (code) => died(code));
    context.kernel = kernel;
    return kernel;
  }

  private runPython(res: ServerResponse, context: CodeContext, code: string, drop: StreamDrop | undefined) {
    const started = Date.now();
    const writer = new EventWriter(res, drop, this.options.pingIntervalMs);
    writer.start();
    const kernel = this.kernel(context);
    const cell = { interrupted: false };
    context.busy = cell;
    writer.write({ type: "init", text: context.id });
    writer.startPing();
    let done = false;
    const finish = (message: Extract<KernelMessage, { type: "done" }>) => {
      if (done) return;
      done = true;
      kernel.onMessage = undefined;
      kernel.onExit = undefined;
      context.busy = undefined;
      context.count++;
      writer.write({ type: "execution_count", execution_count: context.count });
      if (message.text !== undefined) writer.write({ type: "result", results: { text: message.text } });
      if (message.error) writer.write({ type: "error", error: message.error }, true);
      else writer.write({ type: "execution_complete", execution_time: Date.now() - started }, true);
      // Unlike /command, the /code stream ends right after its terminal event.
      writer.end(0);
    };
    // Jupyter streams raw chunks with their newlines; no line splitting here.
    kernel.onMessage = (message) => {
      if (message.type === "done") finish(message);
      else writer.write({ type: message.type, text: message.text });
    };
    kernel.onExit = (exitCode) =>
      finish({
        type: "done",
        error: cell.interrupted
          ? { ename: "KeyboardInterrupt", evalue: "", traceback: ["KeyboardInterrupt"] }
          : { ename: "DeadKernelError", evalue: `the kernel died with exit code ${exitCode}`, traceback: [] },
      });
    if (kernel.exited) kernel.onExit(null);
    else kernel.child.stdin?.write(`${JSON.stringify({ op: "run", code })}\n`);
  }

  private interruptCode(res: ServerResponse, query: URLSearchParams) {
    const id = query.get("id");
    if (!id) return execdError(res, 400, "MISSING_QUERY", "missing query parameter 'id'");
    const context = this.contexts.get(id);
    if (!context)
      return execdError(res, 500, "RUNTIME_ERROR", `error interrupting code: context ${id} not found`);
    const kernel = context.kernel;
    if (context.busy && kernel && !kernel.exited) {
      context.busy.interrupted = true;
      this.interrupted.push(id);
      kernel.child.stdin?.write(`${JSON.stringify({ op: "interrupt" })}\n`);
      // A cell that swallows KeyboardInterrupt gets its kernel killed, as a restart would.
      const busy = context.busy;
      setTimeout(() => {
        if (context.busy === busy && !kernel.exited) killGroup(kernel.child, "SIGKILL");
      }, 3000).unref();
    }
    sendEmpty(res, 200);
  }

  private async upload(req: IncomingMessage, res: ServerResponse) {
    const parts = parseMultipart(await readBody(req), req.headers["content-type"]);
    if (!parts) return execdError(res, 400, "INVALID_FILE", "multipart form is empty");
    // gin keeps parts without a filename in form.Value: only file parts count here.
    const metadata = parts.filter((p) => p.name === "metadata" && p.filename !== undefined);
    const files = parts.filter((p) => p.name === "file" && p.filename !== undefined);
    if (metadata.length === 0)
      return execdError(res, 400, "INVALID_FILE_METADATA", "metadata file is missing");
    if (files.length === 0) return execdError(res, 400, "INVALID_FILE_CONTENT", "file is missing");
    if (metadata.length !== files.length) {
      return execdError(
        res,
        400,
        "INVALID_FILE",
        `metadata and file count mismatch: ${metadata.length} vs ${files.length}`,
      );
    }
    for (let i = 0; i < metadata.length; i++) {
      let meta: { path?: unknown; mode?: unknown; owner?: unknown; group?: unknown };
      try {
        meta = JSON.parse(metadata[i]!.data.toString("utf8"));
      } catch (error) {
        return execdError(
          res,
          400,
          "INVALID_FILE_METADATA",
          `invalid metadata format. ${(error as Error).message}`,
        );
      }
      if (typeof meta?.path !== "string" || meta.path === "") {
        return execdError(res, 400, "INVALID_FILE_METADATA", "metadata path is empty");
      }
      let target: string;
      try {
        const dir = this.fs.writable(posix.dirname(posix.resolve("/", meta.path)));
        mkdirSync(dir.host, { recursive: true });
        target = this.fs.writable(meta.path).host;
      } catch (error) {
        return execdError(
          res,
          500,
          "RUNTIME_ERROR",
          `error creating target directory ${posix.dirname(meta.path)}. ${(error as Error).message}`,
        );
      }
      try {
        const fd = openSync(target, "w", 0o777);
        try {
          writeSync(fd, files[i]!.data);
        } finally {
          closeSync(fd);
        }
        if (typeof meta.mode === "number" && meta.mode !== 0)
          chmodSync(target, Number.parseInt(String(meta.mode), 8));
      } catch (error) {
        return execdError(
          res,
          500,
          "RUNTIME_ERROR",
          `error opening destination file ${meta.path}. ${(error as Error).message}`,
        );
      }
    }
    sendEmpty(res, 200);
  }

  private download(req: IncomingMessage, res: ServerResponse, query: URLSearchParams) {
    const path = query.get("path");
    if (!path) return execdError(res, 400, "MISSING_QUERY", "missing query parameter 'path'");
    let stats: Stats;
    let host: string;
    try {
      const found = this.fs.stat(path);
      stats = found.stats;
      host = found.resolved.host;
    } catch (error) {
      return fileError(res, error);
    }
    if (stats.isDirectory()) {
      return execdError(res, 500, "RUNTIME_ERROR", `error reading file: read ${path}: is a directory`);
    }
    const offset = query.get("offset");
    const limit = query.get("limit");
    if (offset !== null || limit !== null) {
      const o = Number(offset);
      const l = Number(limit);
      if (!offset || !limit) {
        return execdError(
          res,
          400,
          "INVALID_REQUEST_BODY",
          "both offset and limit must be provided together for line-based reading",
        );
      }
      if (!Number.isInteger(o) || o < 1) {
        return execdError(res, 400, "INVALID_REQUEST_BODY", "offset must be a positive integer (1-based)");
      }
      if (!Number.isInteger(l) || l < 1) {
        return execdError(res, 400, "INVALID_REQUEST_BODY", "limit must be a positive integer");
      }
      const lines = readFileSync(host)
        .toString("utf8")
        .split(/(?<=\n)/);
      return sendText(res, 200, lines.slice(o - 1, o - 1 + l).join(""), { "Content-Type": "text/plain" });
    }
    const data = readFileSync(host);
    const name = posix.basename(path);
    const headers: Record<string, string> = {
      "Content-Type": "application/octet-stream",
      "Content-Disposition": contentDisposition(name),
      "Accept-Ranges": "bytes",
      "Last-Modified": stats.mtime.toUTCString(),
    };
    const range = req.headers.range;
    if (range) {
      const parsed = parseRange(range, data.length);
      if (!parsed) return sendJson(res, 416, { code: "UNKNOWN" });
      if (parsed.length > 0) {
        const { start, length } = parsed[0]!;
        res.writeHead(206, {
          ...headers,
          "Content-Range": `bytes ${start}-${start + length - 1}/${data.length}`,
          "Content-Length": String(length),
        });
        res.end(data.subarray(start, start + length));
        return;
      }
    }
    res.writeHead(200, { ...headers, "Content-Length": String(data.length) });
    res.end(data);
  }

  private info(res: ServerResponse, query: URLSearchParams) {
    const out: Record<string, unknown> = {};
    for (const path of query.getAll("path")) {
      try {
        const { stats } = this.fs.lstat(path);
        out[path] = fileInfo(posix.resolve("/", path), stats);
      } catch (error) {
        return fileError(res, error);
      }
    }
    sendJson(res, 200, out);
  }

  private search(res: ServerResponse, query: URLSearchParams) {
    const root = query.get("path");
    if (!root) return execdError(res, 400, "MISSING_QUERY", "missing query parameter 'path'");
    const abs = posix.resolve("/", root);
    try {
      this.fs.stat(abs);
    } catch (error) {
      return fileError(res, error);
    }
    let matcher: RegExp;
    try {
      matcher = globToRegExp(query.get("pattern") || "**");
    } catch (error) {
      return execdError(
        res,
        500,
        "RUNTIME_ERROR",
        `error searching files. invalid pattern: ${(error as Error).message}`,
      );
    }
    const found: unknown[] = [];
    const walk = (path: string, host: string, stats: Stats) => {
      if (!stats.isDirectory()) {
        if (matcher.test(posix.basename(path))) found.push(fileInfo(path, stats));
        return;
      }
      for (const name of readdirSync(host).sort()) {
        const childHost = `${host}/${name}`;
        let childStats: Stats;
        try {
          childStats = lstatSync(childHost);
        } catch {
          continue;
        }
        walk(path === "/" ? `/${name}` : `${path}/${name}`, childHost, childStats);
      }
    };
    const { resolved, stats } = this.fs.lstat(abs);
    walk(abs, resolved.host, stats);
    sendJson(res, 200, found);
  }

  private listDirectory(res: ServerResponse, query: URLSearchParams) {
    const path = query.get("path");
    if (!path) return execdError(res, 400, "MISSING_QUERY", "missing query parameter 'path'");
    let depth = 1;
    const rawDepth = query.get("depth");
    if (rawDepth) {
      const parsed = Number(rawDepth);
      if (!/^-?\d+$/.test(rawDepth) || parsed < 0) {
        return execdError(res, 400, "INVALID_REQUEST_BODY", `invalid query parameter 'depth': ${rawDepth}`);
      }
      depth = parsed;
    }
    const abs = posix.resolve("/", path);
    let found: { resolved: { host: string }; stats: Stats };
    try {
      found = this.fs.lstat(abs);
    } catch (error) {
      return fileError(res, error);
    }
    if (found.stats.isSymbolicLink()) {
      return execdError(
        res,
        400,
        "INVALID_REQUEST_BODY",
        `path is a symbolic link, refusing to traverse: ${abs}`,
      );
    }
    if (!found.stats.isDirectory()) {
      return execdError(res, 400, "INVALID_REQUEST_BODY", `path is not a directory: ${abs}`);
    }
    const entries: unknown[] = [];
    const walk = (dir: string, host: string, level: number) => {
      const children: Dirent[] = readdirSync(host, { withFileTypes: true }).sort((a, b) =>
        a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
      );
      for (const child of children) {
        const childPath = dir === "/" ? `/${child.name}` : `${dir}/${child.name}`;
        const childHost = `${host}/${child.name}`;
        entries.push(fileInfo(childPath, lstatSync(childHost)));
        if (child.isDirectory() && level + 1 < depth) walk(childPath, childHost, level + 1);
      }
    };
    if (depth > 0) walk(abs, found.resolved.host, 0);
    sendJson(res, 200, entries);
  }

  private async makeDirs(req: IncomingMessage, res: ServerResponse) {
    const body = (await this.jsonBody(req, res)) as Record<string, { mode?: number }> | undefined;
    if (body === undefined) return;
    for (const [dir, perm] of Object.entries(body ?? {})) {
      try {
        const target = this.fs.writable(dir);
        let existed = true;
        try {
          statSync(target.host);
        } catch {
          existed = false;
        }
        mkdirSync(target.host, { recursive: true });
        if (!existed && perm?.mode) chmodSync(target.host, Number.parseInt(String(perm.mode), 8));
      } catch (error) {
        return fileError(res, error);
      }
    }
    sendEmpty(res, 200);
  }

  private removeDirs(res: ServerResponse, query: URLSearchParams) {
    for (const dir of query.getAll("path")) {
      try {
        const target = this.fs.resolve(dir, false);
        if (!target.writable) throw new Error(`read-only file system: ${dir}`);
        rmSync(target.host, { recursive: true, force: true });
      } catch (error) {
        return execdError(
          res,
          500,
          "RUNTIME_ERROR",
          `error removing directory ${dir}. ${(error as Error).message}`,
        );
      }
    }
    sendEmpty(res, 200);
  }

  private removeFiles(res: ServerResponse, query: URLSearchParams) {
    for (const path of query.getAll("path")) {
      try {
        let stats: Stats;
        try {
          stats = this.fs.stat(path).stats;
        } catch {
          continue;
        }
        if (stats.isDirectory()) throw new Error(`path is a directory: ${path}`);
        const target = this.fs.resolve(path, false);
        if (!target.writable) throw new Error(`read-only file system: ${path}`);
        unlinkSync(target.host);
      } catch (error) {
        return execdError(
          res,
          500,
          "RUNTIME_ERROR",
          `error removing file ${path}. ${(error as Error).message}`,
        );
      }
    }
    sendEmpty(res, 200);
  }

  private async move(req: IncomingMessage, res: ServerResponse) {
    const body = (await this.jsonBody(req, res)) as { src?: string; dest?: string }[] | undefined;
    if (body === undefined) return;
    for (const item of Array.isArray(body) ? body : []) {
      try {
        const src = this.fs.resolve(String(item.src), false);
        lstatSync(src.host);
        const dest = this.fs.writable(String(item.dest));
        mkdirSync(posix.dirname(dest.host), { recursive: true });
        let exists = true;
        try {
          lstatSync(dest.host);
        } catch {
          exists = false;
        }
        if (exists) throw new Error(`destination path already exists: ${item.dest}`);
        if (!src.writable) throw new Error(`read-only file system: ${item.src}`);
        renameSync(src.host, dest.host);
      } catch (error) {
        return fileError(res, error);
      }
    }
    sendEmpty(res, 200);
  }

  private async replace(req: IncomingMessage, res: ServerResponse, query: URLSearchParams) {
    const body = (await this.jsonBody(req, res)) as
      | Record<string, { old?: string; new?: string }>
      | undefined;
    if (body === undefined) return;
    const results: Record<string, { replacedCount: number }> = {};
    for (const [path, item] of Object.entries(body ?? {})) {
      let content: string;
      let host: string;
      try {
        host = this.fs.writable(path).host;
        content = readFileSync(host, "utf8");
      } catch (error) {
        return fileError(res, error);
      }
      if (!item?.old) return execdError(res, 400, "INVALID_REQUEST_BODY", "old content must not be empty");
      writeFileSync(host, content.split(item.old).join(item.new ?? ""));
      results[path] = { replacedCount: content.split(item.old).length - 1 };
    }
    if (query.get("verbose") === "true") sendJson(res, 200, results);
    else sendEmpty(res, 200);
  }

  private async permissions(req: IncomingMessage, res: ServerResponse) {
    const body = (await this.jsonBody(req, res)) as Record<string, { mode?: number }> | undefined;
    if (body === undefined) return;
    for (const [path, perm] of Object.entries(body ?? {})) {
      try {
        if (perm?.mode) chmodSync(this.fs.writable(path).host, Number.parseInt(String(perm.mode), 8));
      } catch (error) {
        return execdError(
          res,
          500,
          "RUNTIME_ERROR",
          `error changing permissions for ${path}. ${(error as Error).message}`,
        );
      }
    }
    sendEmpty(res, 200);
  }

  private metrics(res: ServerResponse) {
    sendJson(res, 200, {
      cpu_count: cpus().length,
      cpu_used_pct: 0,
      mem_total_mib: Math.round(totalmem() / 1048576),
      mem_used_mib: Math.round((totalmem() - freemem()) / 1048576),
      timestamp: Date.now(),
    });
  }

  /** Whether {@link killAll} ran. */
  get isClosed(): boolean {
    return this.closed;
  }
}

/**
 * Signals a command's process group (in its container: execd's `syscall.Kill(-pid, sig)`, which
 * misses descendants that left the group), or kills a kernel's own bubblewrap sandbox.
 */
export function killGroup(child: ChildProcess | ContainerProcess, signal: NodeJS.Signals): void {
  if (child instanceof ContainerProcess) {
    child.signalGroup(signal);
    return;
  }
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

function contentDisposition(name: string): string {
  if ([...name].every((c) => c.charCodeAt(0) < 128)) return `attachment; filename="${name}"`;
  const encoded = encodeURIComponent(name);
  return `attachment; filename="${encoded}"; filename*=UTF-8''${encoded}`;
}

function parseRange(header: string, size: number): { start: number; length: number }[] | undefined {
  if (!header.startsWith("bytes=")) return undefined;
  const out: { start: number; length: number }[] = [];
  for (const raw of header.slice(6).split(",")) {
    const part = raw.trim();
    if (!part) continue;
    const dash = part.indexOf("-");
    if (dash < 0) return undefined;
    const a = part.slice(0, dash).trim();
    const b = part.slice(dash + 1).trim();
    let start: number;
    let length: number;
    if (a === "") {
      let n = Number(b);
      if (!Number.isInteger(n) || n < 0) return undefined;
      if (n > size) n = size;
      start = size - n;
      length = n;
    } else {
      start = Number(a);
      if (!Number.isInteger(start) || start < 0) return undefined;
      if (b === "") {
        length = size - start;
      } else {
        const end = Number(b);
        if (!Number.isInteger(end) || end < start) return undefined;
        length = end - start + 1;
      }
    }
    if (start >= size) continue;
    if (start + length > size) length = size - start;
    out.push({ start, length });
  }
  return out;
}
