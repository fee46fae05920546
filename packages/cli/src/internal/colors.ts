import type { OutputStream } from "./output-stream.js";

/** ANSI styles that become no-ops when colour is off. */
export interface Colors {
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
}

/**
 * Colours for `stream`: on for a terminal unless `NO_COLOR` is set (to anything non-empty) or
 * `TERM=dumb`; `FORCE_COLOR` (non-empty, not `0`) turns them on anywhere.
 */
export function colors(stream: OutputStream, env: Readonly<Record<string, string | undefined>>): Colors {
  const forced = env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "" && env.FORCE_COLOR !== "0";
  const enabled = forced || (stream.isTTY === true && !env.NO_COLOR && env.TERM !== "dumb");
  const style = (open: number, close: number) => (text: string) =>
    enabled ? `\u001b[${open}m${text}\u001b[${close}m` : text;
  return {
    enabled,
    bold: style(1, 22),
    dim: style(2, 22),
    red: style(31, 39),
    green: style(32, 39),
    yellow: style(33, 39),
    cyan: style(36, 39),
  };
}
