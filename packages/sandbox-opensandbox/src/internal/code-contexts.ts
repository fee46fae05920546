import { type ExecResult, SandboxError } from "@openrath/core";
import { OutputBuffer } from "@openrath/core/backend";
import { outputBuffers, type RunContext, type RunOptions, streamFields } from "./commands.js";
import type { ExecdEvent } from "./event-stream.js";
import { runStream } from "./run-stream.js";
import { within } from "./sleep.js";

/** How long `runPython` waits for its context's deletion before returning anyway. */
const CONTEXT_DELETE_WAIT_MS = 2000;

function stripAnsi(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escapes start with ESC.
  return text.replace(/\x1b\[[0-9;]*[A-Za-z]/g, "");
}

/**
 * Runs one cell in context `contextId` through `POST /code` (raw Jupyter chunks, newlines kept):
 * exit 0 after `execution_complete`, 1 after an `error`, whose traceback goes to stderr. A timeout
 * or abort interrupts the kernel (`DELETE /code?id=`).
 */
function runCell(
  ctx: RunContext,
  contextId: string,
  code: string,
  options: RunOptions,
  stdout: OutputBuffer,
  stderr: OutputBuffer,
): Promise<ExecResult> {
  const push = (buffer: OutputBuffer, event: ExecdEvent) => {
    if (typeof event.text === "string") buffer.push(event.text);
    if (event.oversizedBytes !== undefined) buffer.skip(event.oversizedBytes);
  };
  return runStream(
    {
      ...streamFields(ctx, options, stdout, stderr),
      open: (signal) =>
        ctx.execd.stream("/code", { code, context: { id: contextId, language: "python" } }, signal),
      onEvent(event) {
        if (event.type === "stdout") push(stdout, event);
        else if (event.type === "stderr") push(stderr, event);
        else if (event.type === "execution_complete") return { code: 0 };
        else if (event.type === "error") {
          const e = event.error ?? {};
          const trace = (e.traceback ?? []).map((l) => stripAnsi(String(l))).join("\n");
          stderr.push(`${trace || `${e.ename ?? "Error"}: ${e.evalue ?? ""}`}\n`);
          return { code: 1 };
        }
        // execution_count, result (an expression's value, not printed output), status, ping.
        return undefined;
      },
      interrupt: async () => {
        await ctx.execd.call("DELETE", `/code?id=${encodeURIComponent(contextId)}`).catch(() => undefined);
      },
    },
    ctx.mapFailure,
  );
}

/**
 * Runs Python through `POST /code` in a fresh code-interpreter context (no state shared with other
 * calls, no "session is busy" between parallel calls), deleted afterwards. `/code` takes no
 * environment, so `env` is applied by a first cell that updates `os.environ` in the fresh kernel.
 * The SDK has no code-interpreter client (that package is not on npm), so this calls the HTTP API
 * directly, through the same stream runner as commands.
 */
export async function runPython(ctx: RunContext, code: string, options: RunOptions): Promise<ExecResult> {
  const { stdout, stderr } = outputBuffers(options);
  let context: { id?: unknown };
  try {
    context = await ctx.execd.json<{ id?: unknown }>("POST", "/code/context", {
      language: "python",
      cwd: options.cwd,
    });
  } catch (error) {
    throw ctx.mapFailure(error, options.what);
  }
  if (typeof context?.id !== "string") {
    throw new SandboxError(
      "sandbox_remote_error",
      `${options.what}: execd created a context without an id.`,
      {
        details: { id: ctx.sandboxId },
      },
    );
  }
  const contextId = context.id;
  try {
    if (options.env) {
      const setupErr = new OutputBuffer(64 * 1024);
      const setup = `import os as _openrath_os\n_openrath_os.environ.update(${JSON.stringify(options.env)})\ndel _openrath_os`;
      const done = await runCell(ctx, contextId, setup, options, new OutputBuffer(64 * 1024), setupErr);
      if (done.exitCode !== 0) {
        throw new SandboxError(
          "sandbox_remote_error",
          `${options.what}: setting env in the Python kernel failed: ${setupErr.text()}`,
          { details: { id: ctx.sandboxId } },
        );
      }
    }
    return await runCell(ctx, contextId, code, options, stdout, stderr);
  } finally {
    if (!ctx.lifetime.aborted) {
      // Each context is a kernel process: free it now rather than leave it to the sandbox's end.
      await within(
        ctx.execd.call("DELETE", `/code/contexts/${encodeURIComponent(contextId)}`).catch(() => undefined),
        CONTEXT_DELETE_WAIT_MS,
      );
    }
  }
}
