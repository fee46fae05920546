import type { ExecResult, SandboxError } from "@openrath/core";
import { DEFAULT_MAX_OUTPUT_BYTES, OutputBuffer } from "@openrath/core/backend";
import type { ExecdEvent } from "./event-stream.js";
import type { ExecdClient } from "./execd-client.js";
import { type Outcome, runStream, type StreamRun } from "./run-stream.js";

/** Options of one command or code cell. */
export interface RunOptions {
  /** Working directory inside the sandbox. */
  readonly cwd: string;
  readonly env?: Readonly<Record<string, string>>;
  /** `Infinity` for none. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  readonly onStdout?: (text: string) => void;
  readonly onStderr?: (text: string) => void;
  readonly maxOutputBytes?: number;
  /** For messages: "Command `ls`", "Python code". */
  readonly what: string;
}

/** What commands and code cells run through. */
export interface RunContext {
  readonly execd: ExecdClient;
  readonly sandboxId: string;
  /** Fires when the sandbox closes. */
  readonly lifetime: AbortSignal;
  readonly mapFailure: (error: unknown, what: string) => SandboxError;
}

/** The stdout and stderr buffers of one run, capped at `options.maxOutputBytes`, streaming to its callbacks. */
export function outputBuffers(options: RunOptions): { stdout: OutputBuffer; stderr: OutputBuffer } {
  const max = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  return { stdout: new OutputBuffer(max, options.onStdout), stderr: new OutputBuffer(max, options.onStderr) };
}

/** The fields of a {@link StreamRun} that come from the context and the run's options, with its output buffers. */
export function streamFields(
  ctx: RunContext,
  options: RunOptions,
  stdout: OutputBuffer,
  stderr: OutputBuffer,
): Pick<StreamRun, "what" | "sandboxId" | "timeoutMs" | "signal" | "lifetime" | "stdout" | "stderr"> {
  return {
    what: options.what,
    sandboxId: ctx.sandboxId,
    timeoutMs: options.timeoutMs,
    ...(options.signal ? { signal: options.signal } : {}),
    lifetime: ctx.lifetime,
    stdout,
    stderr,
  };
}

/** Variable every command carries, so what it leaves after an interrupt can be found. */
const EXEC_MARKER = "OPENRATH_EXEC_ID";

/** Extra time given to execd's own timeout, the backstop for a client that died. */
const SERVER_TIMEOUT_SLACK_MS = 5000;

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

/**
 * Kills, after an interrupt, what execd's process-group signal missed: every process whose
 * environment carries the command's marker, and their descendants (by parent links), in passes. Best effort (a descendant that double-forked, called setsid and cleared
 * its environment has nothing left to be found by), which the manifest says (`processTree`).
 */
const KILL_TREE = `
id=${EXEC_MARKER}=$1 me=$$ n=0 found=1 g=" "
while [ $found = 1 ] && [ $n -lt 6 ]; do
  found=0 n=$((n + 1))
  for d in /proc/[0-9]*; do
    p=\${d#/proc/}
    [ "$p" = 1 ] || [ "$p" = "$me" ] && continue
    st=$(cat "$d/stat" 2>/dev/null) || continue
    st=\${st##*) }
    pp=\${st#* }; pp=\${pp%% *}
    hit=0
    case "$g" in *" $pp "*) hit=1 ;; esac
    if [ $hit = 0 ] && tr '\\000' '\\n' < "$d/environ" 2>/dev/null | grep -qx "$id"; then hit=1; fi
    if [ $hit = 1 ]; then g="$g$p "; kill -9 "$p" 2>/dev/null && found=1; fi
  done
done
exit 0
`;

function randomHex(): string {
  const bytes = new Uint8Array(8);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The exit code of an `error` event: `evalue` is the code, `-1` plus `signal: <name>` for a signal. */
function exitOf(error: ExecdEvent["error"]): Outcome {
  const value = String(error?.evalue ?? "").trim();
  if (!/^-?\d+$/.test(value)) return { startError: value || String(error?.ename ?? "unknown error") };
  const code = Number(value);
  if (code !== -1) return { code };
  const signal = /^signal: (.+)$/.exec(String(error?.traceback?.[0] ?? ""))?.[1];
  const number = signal ? SIGNALS[signal] : undefined;
  return { code: number ? 128 + number : -1 };
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

  /** A line too long to keep: its start as output, the rest counted as cut. */
  oversized(head: string, bytes: number): void {
    if (this.done) return;
    this.out.push((this.started ? "\n" : "") + head);
    this.started = true;
    this.out.skip(bytes);
  }

  /** Ends the stream; without the marker (the command was killed) the last line counts as terminated. */
  finish(): void {
    if (!this.done && this.started) this.out.push("\n");
    this.done = true;
  }
}

/**
 * Runs `line` (a shell line for execd's `bash -c`) through `POST /command`. The line runs inside a
 * wrapper that prints an end marker on both streams afterwards, so the output is rebuilt exactly
 * (see {@link ExactLines}), and with a marker variable, so a timeout, an abort or a broken stream
 * can interrupt it (`DELETE /command?id=`, which signals its process group) and then kill what
 * left the group (see {@link KILL_TREE}).
 */
export function runCommand(ctx: RunContext, line: string, options: RunOptions): Promise<ExecResult> {
  const { stdout, stderr } = outputBuffers(options);
  const end = `__openrath_end_${randomHex()}__`;
  const tag = randomHex();
  const out = new ExactLines(stdout, end);
  const err = new ExactLines(stderr, end);
  const wrapped = `${line}\n__openrath_rc=$?\nprintf '\\n%s\\n' ${end}\nprintf '\\n%s\\n' ${end} >&2\nexit $__openrath_rc`;
  return runStream(
    {
      ...streamFields(ctx, options, stdout, stderr),
      open: (signal) =>
        ctx.execd.stream(
          "/command",
          {
            command: wrapped,
            cwd: options.cwd,
            ...(Number.isFinite(options.timeoutMs)
              ? { timeout: Math.ceil(options.timeoutMs + SERVER_TIMEOUT_SLACK_MS) }
              : {}),
            envs: { ...(options.env ?? {}), [EXEC_MARKER]: tag },
          },
          signal,
        ),
      onEvent(event) {
        const target = event.type === "stdout" ? out : event.type === "stderr" ? err : undefined;
        if (target && event.oversizedBytes !== undefined)
          target.oversized(event.text ?? "", event.oversizedBytes);
        else if (target && typeof event.text === "string") target.line(event.text);
        else if (event.type === "execution_complete") return { code: 0 };
        else if (event.type === "error") return exitOf(event.error);
        // ping (keep-alive), status and anything newer: nothing to do.
        return undefined;
      },
      async interrupt(id) {
        if (id) await ctx.execd.interruptCommand(id).catch(() => undefined);
        await killTree(ctx, tag);
      },
      finish() {
        out.finish();
        err.finish();
      },
    },
    ctx.mapFailure,
  );
}

/** Runs {@link KILL_TREE} for the command tagged `tag` (its own interrupt does nothing more). */
async function killTree(ctx: RunContext, tag: string): Promise<void> {
  if (ctx.lifetime.aborted) return;
  const sink = new OutputBuffer(4096);
  await runStream(
    {
      what: "Killing what an interrupted command left",
      sandboxId: ctx.sandboxId,
      timeoutMs: 15_000,
      lifetime: ctx.lifetime,
      stdout: sink,
      stderr: sink,
      open: (signal) =>
        ctx.execd.stream(
          "/command",
          { command: `sh -c '${KILL_TREE.replaceAll("'", "'\\''")}' sh ${tag}`, cwd: "/", timeout: 20_000 },
          signal,
        ),
      onEvent: (event) =>
        event.type === "execution_complete"
          ? { code: 0 }
          : event.type === "error"
            ? exitOf(event.error)
            : undefined,
      interrupt: async (id) => {
        if (id) await ctx.execd.interruptCommand(id).catch(() => undefined);
      },
    },
    ctx.mapFailure,
  ).catch(() => undefined);
}
