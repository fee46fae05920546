import type { Readable } from "node:stream";
import type Dockerode from "dockerode";

/**
 * How long a finished exec's output waits for its `exec_die` event before inspecting the exec
 * too (the stream can end a while before the process does when the daemon is busy).
 */
const EVENT_FIRST_MS = 50;
/** After this many exits that an inspect found first, with no event seen yet, the daemon is taken not to send them. */
const MAX_MISSES = 3;
/** A longer event line than this is not an event the watcher wants: the stream is dropped. */
const MAX_LINE_BYTES = 1024 * 1024;

interface ExecDieEvent {
  readonly Action?: unknown;
  readonly Actor?: { readonly Attributes?: Record<string, unknown> };
}

/** One exec's exit, as {@link ExecExits.expect} hands it out. */
export interface ExpectedExit {
  /** The exit code from the event; `undefined` when the event stream stopped first. */
  readonly code: Promise<number | undefined>;
  /** Whether the code is already known. */
  readonly known: () => boolean;
  /** Stops waiting (the exit was learned otherwise). */
  readonly forget: () => void;
}

const NO_EVENT: ExpectedExit = { code: Promise.resolve(undefined), known: () => false, forget: () => {} };

/**
 * The exit codes of one container's execs, read off the daemon's event stream (`exec_die` carries
 * `execID` and `exitCode`), so a finished exec usually costs no `GET /exec/{id}/json`: two
 * requests per command (create, start) instead of three or more.
 *
 * One `GET /events` per sandbox, filtered on its container, opened with the sandbox and destroyed
 * on close; its socket does not keep the process alive. An exec whose event is late is inspected
 * as before (whichever answers first wins); a stream that cannot be opened, ends or breaks, and a
 * daemon from which no awaited event came while inspects found a few exits (one that does not
 * send them), turn the events off for the sandbox.
 */
export class ExecExits {
  private stream: Readable | undefined;
  private working = false;
  private closed = false;
  private misses = 0;
  /** Whether any awaited event arrived: then the daemon sends them, and a late one is only late. */
  private heard = false;
  private readonly connected: Promise<boolean>;
  private readonly waiters = new Map<string, (code: number | undefined) => void>();
  private buffered = "";

  constructor(docker: Dockerode, containerId: string) {
    this.connected = (
      docker.getEvents({
        filters: { type: ["container"], container: [containerId], event: ["exec_die"] },
      }) as Promise<Readable>
    ).then(
      (stream) => {
        if (this.closed) {
          stream.destroy();
          return false;
        }
        this.stream = stream;
        this.working = true;
        (stream as Readable & { socket?: { unref?: () => void } }).socket?.unref?.();
        stream.setEncoding("utf8");
        stream.on("data", (text: string) => this.read(text));
        stream.once("error", () => this.stop());
        stream.once("end", () => this.stop());
        stream.once("close", () => this.stop());
        return true;
      },
      () => false,
    );
  }

  /** Registers interest in `execId`'s exit; call it before the exec starts. */
  async expect(execId: string): Promise<ExpectedExit> {
    if (!(await this.connected) || !this.working) return NO_EVENT;
    let known = false;
    let settle: (code: number | undefined) => void = () => {};
    const code = new Promise<number | undefined>((resolve) => {
      settle = (value) => {
        known = value !== undefined;
        resolve(value);
      };
    });
    this.waiters.set(execId, settle);
    return {
      code,
      known: () => known,
      forget: () => {
        this.waiters.delete(execId);
        settle(undefined);
      },
    };
  }

  /**
   * The exit code of an exec whose output ended: its event when it comes within a moment, else
   * whichever of the event and `inspect` (which polls until Docker records the exit, and stops
   * early when its argument says the event came) answers first.
   */
  async exitCode(
    expected: ExpectedExit,
    inspect: (answered: () => boolean) => Promise<number>,
  ): Promise<number> {
    let timer: NodeJS.Timeout | undefined;
    const soon = await Promise.race([
      expected.code,
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), EVENT_FIRST_MS);
      }),
    ]);
    clearTimeout(timer);
    if (soon !== undefined) return soon;
    const polled = inspect(expected.known);
    polled.catch(() => undefined);
    const code = await Promise.race([expected.code.then((value) => value ?? polled), polled]);
    if (!expected.known() && !this.heard && ++this.misses >= MAX_MISSES) this.stop();
    expected.forget();
    return code;
  }

  /** Closes the event stream. */
  close(): void {
    this.closed = true;
    this.stop();
  }

  private stop(): void {
    this.working = false;
    this.stream?.destroy();
    for (const settle of this.waiters.values()) settle(undefined);
    this.waiters.clear();
  }

  private read(text: string): void {
    this.buffered += text;
    let newline = this.buffered.indexOf("\n");
    while (newline !== -1) {
      const line = this.buffered.slice(0, newline);
      this.buffered = this.buffered.slice(newline + 1);
      this.event(line);
      newline = this.buffered.indexOf("\n");
    }
    if (this.buffered.length > MAX_LINE_BYTES) this.stop();
  }

  private event(line: string): void {
    if (!line.trim()) return;
    let event: ExecDieEvent;
    try {
      event = JSON.parse(line) as ExecDieEvent;
    } catch {
      return;
    }
    const attributes = event.Actor?.Attributes;
    const id = attributes?.execID;
    const code = Number(attributes?.exitCode);
    if (event.Action !== "exec_die" || typeof id !== "string" || !Number.isSafeInteger(code)) return;
    // Others' execs in the container (a `docker exec` by hand) have no waiter and are ignored.
    const settle = this.waiters.get(id);
    if (!settle) return;
    this.waiters.delete(id);
    this.heard = true;
    settle(code);
  }
}
