import { type ChildProcess, spawn } from "node:child_process";
import { EventEmitter } from "node:events";
import { finished, PassThrough } from "node:stream";
import { rootArgs } from "./bwrap.js";
import type { Mount } from "./sandbox-fs.js";

/**
 * The agent that lives in a fake sandbox's bubblewrap namespace, as a container's processes do:
 * it starts every command in a process group of its own (execd's `Setpgid`) and signals that
 * group when asked. All commands of a sandbox share its PID namespace, so a descendant that left
 * the group (`setsid`) outlives an interrupt, as it does under real execd. Newline-JSON on stdin
 * and stdout.
 */
const AGENT = `"use strict";
const { spawn } = require("node:child_process");
const children = new Map();
const send = (message) => process.stdout.write(JSON.stringify(message) + "\\n");
let pending = "";
process.stdin.setEncoding("utf8").on("data", (text) => {
  pending += text;
  let newline = pending.indexOf("\\n");
  while (newline >= 0) {
    const message = JSON.parse(pending.slice(0, newline));
    pending = pending.slice(newline + 1);
    newline = pending.indexOf("\\n");
    if (message.op === "spawn") {
      let child;
      try {
        child = spawn(message.argv[0], message.argv.slice(1), { cwd: message.cwd, env: message.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
      } catch (error) {
        send({ op: "exit", id: message.id, code: null, signal: null, error: String(error.message) });
        continue;
      }
      children.set(message.id, child);
      child.stdout.on("data", (data) => send({ op: "out", id: message.id, fd: 1, data: data.toString("base64") }));
      child.stderr.on("data", (data) => send({ op: "out", id: message.id, fd: 2, data: data.toString("base64") }));
      child.on("error", (error) => { if (child.pid === undefined) send({ op: "exit", id: message.id, code: null, signal: null, error: String(error.message) }); });
      child.on("close", (code, signal) => { children.delete(message.id); send({ op: "exit", id: message.id, code, signal }); });
    } else if (message.op === "signal") {
      const child = children.get(message.id);
      if (child && child.pid) { try { process.kill(-child.pid, message.signal); } catch {} }
    }
  }
});
process.stdin.on("end", () => process.exit(0));
`;

/** A command running in a {@link FakeContainer}: the part of `ChildProcess` the fake execd uses. */
export class ContainerProcess extends EventEmitter {
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;

  constructor(
    private readonly container: FakeContainer,
    /** The container's id for it (not a host pid). */
    readonly pid: number,
  ) {
    super();
  }

  /** Signals the command's process group, as execd's `syscall.Kill(-pid, sig)` does. */
  signalGroup(signal: NodeJS.Signals): void {
    if (this.exitCode === null && this.signalCode === null) this.container.signal(this.pid, signal);
  }

  /**
   * Ends the command with the agent's report: `exit` at once, `close` once its reader has taken
   * all of stdout and stderr (as `ChildProcess` does). Output a paused reader has not taken yet
   * (execd waiting for a slow client) comes before `close`, as execd reads its whole log file
   * after the command exits and only then sends the terminal event.
   */
  finish(code: number | null, signal: NodeJS.Signals | null, error?: string): void {
    if (error !== undefined) {
      this.emit("error", new Error(error));
      return;
    }
    this.exitCode = code;
    this.signalCode = signal;
    let open = 2;
    const drained = () => {
      open--;
      if (open === 0) this.emit("close", code, signal);
    };
    finished(this.stdout, drained);
    finished(this.stderr, drained);
    this.stdout.end();
    this.stderr.end();
    this.emit("exit", code, signal);
  }
}

/** One fake sandbox's "container": a long-lived bubblewrap namespace with the {@link AGENT} in it. */
export class FakeContainer {
  private readonly bwrap: ChildProcess;
  private readonly processes = new Map<number, ContainerProcess>();
  private next = 1;
  private buffered = "";
  private readonly closed: Promise<void>;

  constructor(mounts: readonly Mount[], env: Record<string, string>) {
    this.bwrap = spawn(
      "bwrap",
      [
        "--die-with-parent",
        "--unshare-all",
        "--new-session",
        ...rootArgs(mounts),
        "--",
        process.execPath,
        "-e",
        AGENT,
      ],
      { stdio: ["pipe", "pipe", "ignore"], env, detached: true },
    );
    this.closed = new Promise((resolve) => this.bwrap.once("close", () => resolve()));
    this.bwrap.stdin!.on("error", () => {});
    this.bwrap.stdout!.setEncoding("utf8").on("data", (text: string) => this.read(text));
    this.bwrap.once("close", () => {
      for (const process of this.processes.values()) process.finish(null, "SIGKILL");
      this.processes.clear();
    });
  }

  /** Starts `argv` in the container, in a process group of its own. */
  spawn(argv: readonly string[], options: { cwd: string; env: Record<string, string> }): ContainerProcess {
    const id = this.next++;
    const child = new ContainerProcess(this, id);
    this.processes.set(id, child);
    this.bwrap.stdin!.write(
      `${JSON.stringify({ op: "spawn", id, argv, cwd: options.cwd, env: options.env })}\n`,
    );
    return child;
  }

  signal(id: number, signal: NodeJS.Signals): void {
    this.bwrap.stdin!.write(`${JSON.stringify({ op: "signal", id, signal })}\n`);
  }

  /** Kills everything in the container (the sandbox was deleted). */
  async close(): Promise<void> {
    if (this.bwrap.pid !== undefined && this.bwrap.exitCode === null && this.bwrap.signalCode === null) {
      try {
        process.kill(-this.bwrap.pid, "SIGKILL");
      } catch {
        // Gone already.
      }
    }
    await this.closed;
  }

  private read(text: string): void {
    this.buffered += text;
    let newline = this.buffered.indexOf("\n");
    while (newline >= 0) {
      const message = JSON.parse(this.buffered.slice(0, newline)) as {
        op: string;
        id: number;
        fd?: number;
        data?: string;
        code?: number | null;
        signal?: NodeJS.Signals | null;
        error?: string;
      };
      this.buffered = this.buffered.slice(newline + 1);
      newline = this.buffered.indexOf("\n");
      const child = this.processes.get(message.id);
      if (!child) continue;
      if (message.op === "out") {
        const stream = message.fd === 2 ? child.stderr : child.stdout;
        // A reader that paused (execd waiting for its poll or for a slow client) stops the channel
        // from the container until it drains, instead of filling this process's memory.
        if (!stream.write(Buffer.from(message.data ?? "", "base64")) && !this.bwrap.stdout!.isPaused()) {
          this.bwrap.stdout!.pause();
          stream.once("drain", () => this.bwrap.stdout!.resume());
        }
      } else if (message.op === "exit") {
        this.processes.delete(message.id);
        child.finish(message.code ?? null, message.signal ?? null, message.error);
      }
    }
  }
}
