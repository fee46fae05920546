import type { Colors } from "./colors.js";
import type { OutputStream } from "./output-stream.js";

/** Shows what long work is doing. */
export interface Progress {
  /** The current step. On a terminal it replaces the spinner's text; elsewhere it is printed as a line (repeats skipped). */
  update(text: string): void;
  /** Ends the progress display, printing `text` as a final line if given. Idempotent. */
  done(text?: string): void;
}

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/**
 * Progress on `stream` (the CLI uses stderr, so stdout stays clean for results): a spinner with
 * the current step on a terminal, plain lines otherwise (logs, CI, pipes). `quiet` prints nothing.
 */
export function createProgress(
  stream: OutputStream,
  options: {
    readonly colors: Colors;
    /** Print nothing at all. */
    readonly quiet?: boolean;
    /** Off a terminal, print steps as lines (default true); false keeps quick work silent there. */
    readonly plain?: boolean;
    readonly intervalMs?: number;
  },
): Progress {
  const { colors: c } = options;
  if (options.quiet || (!stream.isTTY && options.plain === false)) return { update() {}, done() {} };
  if (!stream.isTTY) {
    let last: string | undefined;
    return {
      update(text) {
        if (text === last) return;
        last = text;
        stream.write(`${text}\n`);
      },
      done(text) {
        if (text !== undefined) stream.write(`${text}\n`);
      },
    };
  }
  let text = "";
  let frame = 0;
  let stopped = false;
  const width = () => Math.max(20, (stream.columns || 80) - 3);
  const draw = () => {
    const line = text.length > width() ? `${text.slice(0, width() - 1)}…` : text;
    stream.write(`\r\u001b[2K${c.cyan(FRAMES[frame % FRAMES.length]!)} ${line}`);
    frame++;
  };
  const timer = setInterval(draw, options.intervalMs ?? 80);
  timer.unref?.();
  return {
    update(next) {
      if (stopped) return;
      text = next.trim();
      draw();
    },
    done(final) {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      stream.write("\r\u001b[2K");
      if (final !== undefined) stream.write(`${c.green("✓")} ${final}\n`);
    },
  };
}
