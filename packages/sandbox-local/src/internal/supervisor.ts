/**
 * The process that lives in a bubblewrap sandbox and starts its commands. It runs as plain
 * JavaScript in this Node.js (`node -e`), talks to the host over its stdin and stdout in
 * {@link Frame}s, and starts every command as
 *
 *   unshare --user --map-current-user --pid --fork --kill-child -- /bin/sh -c INIT sh <argv...>
 *
 * so each command lives in a PID namespace of its own, nested in the sandbox's: a kill sends
 * SIGKILL to the namespace's init (the one child of `unshare`) and to `unshare` (whose
 * `--kill-child` covers the supervisor's own death), which takes every process of the command
 * along, whatever it did (setsid, a cleared environment, SIGTERM ignored). A command cannot see or
 * signal the supervisor, which lives in the parent namespace. INIT is a small shell that runs the
 * command as its child, so the command is not PID 1 (which would ignore default signals) and its
 * exit status, 128 + n after a signal, comes back as the shell's. (Standard input goes through fd
 * 3 because a shell gives an asynchronous command `/dev/null` as its stdin otherwise.)
 *
 * Spares keep that chain off a warm exec's path: when a command ends, the supervisor starts the
 * next one's namespace (same environment and directory) with no operands, and its INIT waits for
 * them on its standard input; the next command with that environment and directory only writes
 * them there. The fork and exec of `unshare`, the namespaces and the first shell then happen
 * between commands instead of during one.
 *
 * Output is forwarded up to the exec's cap and counted beyond it, so a flood costs the host
 * nothing but the count.
 */

/** Frame types, host → supervisor. */
export const FRAME_START = 1;
export const FRAME_STDIN = 2;
export const FRAME_STDIN_END = 3;
export const FRAME_KILL = 4;
/** Frame types, supervisor → host. */
export const FRAME_READY = 10;
export const FRAME_STDOUT = 11;
export const FRAME_STDERR = 12;
export const FRAME_EXIT = 13;

/** Largest frame payload either side accepts; anything bigger is a protocol violation. */
export const MAX_FRAME_BYTES = 1024 * 1024;

/** A frame header: type (1 byte), command id (4 bytes), payload length (4 bytes), big-endian. */
export const FRAME_HEADER_BYTES = 9;

/** The START payload. */
export interface StartRequest {
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /** Whether STDIN frames follow (otherwise stdin is closed at once). */
  readonly stdin: boolean;
  /** Bytes of each of stdout and stderr to forward; the rest is counted. */
  readonly maxBytes: number;
}

/** The EXIT payload. */
export interface ExitReport {
  readonly code: number | null;
  readonly signal: string | null;
  /** Bytes of stdout and stderr past the cap, not forwarded. */
  readonly omitted: readonly [number, number];
  /** Set when the command could not be started at all. */
  readonly error?: string;
}

/** Shell variables a spare's init uses; a command whose environment names them gets no spare. */
const NL = "openrath_nl";
const LINE = "openrath_line";

/**
 * The init shell of every command's PID namespace (see the file comment). Given no operands it
 * reads them first, as one line of single-quoted words on its standard input (what a spare
 * namespace does: it is started before its command is known).
 */
const INIT = `if [ $# -eq 0 ]; then ${NL}='
'; IFS= read -r ${LINE} || exit 0; eval "set -- $${LINE}"; fi
exec 3<&0; "$@" <&3 3<&- & wait $!`;

/**
 * Longest operand line a spare reads; longer commands start a namespace of their own with their
 * operands on its command line (the shell's \`read\` takes one byte per system call).
 */
const SPARE_MAX_LINE = 4096;

/** The supervisor's source; \`process.argv[1]\` is the \`unshare\` executable. */
export const SUPERVISOR_SOURCE = `"use strict";
const { spawn } = require("node:child_process");
const { readFileSync, statSync } = require("node:fs");
const UNSHARE = process.argv[1];
const INIT = ${JSON.stringify(INIT)};
const FLAGS = ["--user", "--map-current-user", "--pid", "--fork", "--kill-child", "--", "/bin/sh", "-c", INIT, "sh"];
const MAX = ${MAX_FRAME_BYTES};
const SPARE_MAX_LINE = ${SPARE_MAX_LINE};
const SPARES = 2;
const runs = new Map();
let pending = Buffer.alloc(0);
let blocked = false;
function send(type, id, payload) {
  const body = payload === undefined ? Buffer.alloc(0) : Buffer.isBuffer(payload) ? payload : Buffer.from(JSON.stringify(payload));
  const head = Buffer.alloc(9);
  head[0] = type; head.writeUInt32BE(id, 1); head.writeUInt32BE(body.length, 5);
  if (!process.stdout.write(Buffer.concat([head, body])) && !blocked) {
    blocked = true;
    for (const run of runs.values()) { run.child.stdout.pause(); run.child.stderr.pause(); }
    process.stdout.once("drain", () => {
      blocked = false;
      for (const run of runs.values()) { run.child.stdout.resume(); run.child.stderr.resume(); }
    });
  }
}
function forward(run, index, type, chunk) {
  const room = run.max - run.sent[index];
  if (room > 0) {
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    run.sent[index] += part.length;
    for (let at = 0; at < part.length; at += 65536) send(type, run.id, part.subarray(at, at + 65536));
  }
  if (chunk.length > room) run.omitted[index] += chunk.length - Math.max(room, 0);
}
// A namespace's init is the one child of its unshare. SIGKILL from this (the parent) namespace
// reaches it whatever the command did to it, and takes every process of the namespace along, so a
// kill does not rest on unshare's parent-death signal alone (a process may clear that of its init).
function kill(child) {
  if (child.pid !== undefined) {
    let children = "";
    try { children = readFileSync("/proc/" + child.pid + "/task/" + child.pid + "/children", "utf8"); } catch {}
    for (const pid of children.split(" ")) {
      if (/^[0-9]+$/.test(pid)) try { process.kill(Number(pid), "SIGKILL"); } catch {}
    }
  }
  child.kill("SIGKILL");
}
function directory(cwd) {
  try { const s = statSync(cwd); return s.dev + ":" + s.ino; } catch { return undefined; }
}
// Spares: namespaces started ahead for the next commands, with the environment and directory of
// recent ones (at most SPARES, the least recently used dropped), their init waiting for the
// command's operands on its standard input. Only this process can reach them (a command's user
// namespace has no rights over a sibling's).
const spares = new Map();
function prepare(cwd, env, key) {
  if (spares.has(key) || Object.hasOwn(env, ${JSON.stringify(NL)}) || Object.hasOwn(env, ${JSON.stringify(LINE)})) return;
  const dir = directory(cwd);
  if (dir === undefined) return;
  let child;
  try { child = spawn(UNSHARE, FLAGS, { cwd, env, stdio: ["pipe", "pipe", "pipe"] }); } catch { return; }
  const entry = { child, dir };
  child.on("error", () => {});
  child.stdin.on("error", () => {});
  child.once("exit", () => { if (spares.get(key) === entry) spares.delete(key); });
  spares.set(key, entry);
  if (spares.size > SPARES) {
    const [oldest, old] = spares.entries().next().value;
    spares.delete(oldest);
    kill(old.child);
  }
}
function quote(word) {
  return "'" + word.replace(/'/g, "'\\\\''").replace(/\\n/g, "'\\"$${NL}\\"'") + "'";
}
function take(request, key) {
  const entry = spares.get(key);
  if (!entry || entry.child.exitCode !== null || entry.child.signalCode !== null) return undefined;
  const line = request.argv.map(quote).join(" ");
  if (line.length > SPARE_MAX_LINE) return undefined;
  spares.delete(key);
  if (directory(request.cwd) !== entry.dir) { kill(entry.child); return undefined; }
  entry.child.stdin.write(line + "\\n");
  return entry.child;
}
function start(id, request) {
  const key = request.cwd + "\\0" + JSON.stringify(request.env);
  let child = take(request, key);
  if (!child) {
    try {
      child = spawn(UNSHARE, [...FLAGS, ...request.argv], { cwd: request.cwd, env: request.env, stdio: ["pipe", "pipe", "pipe"] });
    } catch (error) {
      send(13, id, { code: null, signal: null, omitted: [0, 0], error: String(error && error.message) });
      return;
    }
  }
  const run = { id, child, max: request.maxBytes, sent: [0, 0], omitted: [0, 0], done: false };
  runs.set(id, run);
  if (blocked) { child.stdout.pause(); child.stderr.pause(); }
  child.stdin.on("error", () => {});
  if (!request.stdin) child.stdin.end();
  child.stdout.on("data", (chunk) => forward(run, 0, 11, chunk));
  child.stderr.on("data", (chunk) => forward(run, 1, 12, chunk));
  const finish = (code, signal, error) => {
    if (run.done) return;
    run.done = true;
    runs.delete(id);
    send(13, id, { code, signal, omitted: run.omitted, ...(error ? { error } : {}) });
    if (!error) prepare(request.cwd, request.env, key);
  };
  child.on("error", (error) => { if (child.pid === undefined) finish(null, null, String(error.message)); });
  child.on("close", (code, signal) => finish(code, signal));
}
function handle(type, id, payload) {
  const run = runs.get(id);
  if (type === 1) return start(id, JSON.parse(payload.toString("utf8")));
  if (!run) return;
  if (type === 2) run.child.stdin.write(payload);
  else if (type === 3) run.child.stdin.end();
  else if (type === 4) kill(run.child);
}
process.stdin.on("data", (chunk) => {
  pending = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
  while (pending.length >= 9) {
    const length = pending.readUInt32BE(5);
    if (length > MAX) process.exit(70);
    if (pending.length < 9 + length) break;
    const type = pending[0];
    const id = pending.readUInt32BE(1);
    const payload = pending.subarray(9, 9 + length);
    pending = pending.subarray(9 + length);
    handle(type, id, payload);
  }
});
process.stdin.on("end", () => {
  for (const run of runs.values()) kill(run.child);
  for (const entry of spares.values()) kill(entry.child);
  process.exit(0);
});
send(10, 0, { pid: process.pid });
`;
