import { describe, expect, it } from "vitest";
import { colors } from "./colors.js";
import { createProgress } from "./progress.js";

const ESC = "\u001b";

function stream(isTTY: boolean) {
  const out = { text: "", isTTY, columns: 40, write: (s: string) => (out.text += s) };
  return out;
}

describe("createProgress", () => {
  it("prints plain lines off a terminal, skipping repeats", () => {
    const s = stream(false);
    const p = createProgress(s, { colors: colors(s, {}) });
    p.update("▶ mams");
    p.update("▶ mams");
    p.update("  wordsmith → run_shell_command");
    p.done("finished");
    p.update("after done");
    expect(s.text).toBe("▶ mams\n  wordsmith → run_shell_command\nfinished\nafter done\n");
  });

  it("stays silent off a terminal for quick work (plain: false) and when quiet", () => {
    const s = stream(false);
    createProgress(s, { colors: colors(s, {}), plain: false }).update("reading");
    createProgress(s, { colors: colors(s, {}), quiet: true }).update("reading");
    expect(s.text).toBe("");
  });

  it("draws a spinner on a terminal that rewrites one line and clears it when done", () => {
    const s = stream(true);
    const p = createProgress(s, { colors: colors(s, {}) });
    p.update("a step with a long description that does not fit the terminal");
    p.done("done");
    const frames = s.text.split("\r\u001b[2K").filter(Boolean);
    const plain = frames[0]!.replaceAll(`${ESC}[36m`, "").replaceAll(`${ESC}[39m`, "");
    expect(frames[0]!.startsWith(`${ESC}[36m⠋${ESC}[39m a step with `)).toBe(true);
    expect(plain.endsWith("…")).toBe(true);
    expect(plain.length).toBeLessThanOrEqual(40);
    expect(frames.at(-1)).toBe("\u001b[32m✓\u001b[39m done\n");
    expect(s.text).not.toContain("\n\u001b");
  });

  it("keeps the spinner but drops colour with NO_COLOR", () => {
    const s = stream(true);
    const p = createProgress(s, { colors: colors(s, { NO_COLOR: "1" }) });
    p.update("working");
    p.done();
    expect(s.text).toBe("\r\u001b[2K⠋ working\r\u001b[2K");
  });
});

describe("colors", () => {
  it("turns on for a terminal, off for NO_COLOR, TERM=dumb and pipes, on anywhere with FORCE_COLOR", () => {
    expect(colors(stream(true), {}).enabled).toBe(true);
    expect(colors(stream(true), { NO_COLOR: "1" }).enabled).toBe(false);
    expect(colors(stream(true), { TERM: "dumb" }).enabled).toBe(false);
    expect(colors(stream(false), {}).enabled).toBe(false);
    expect(colors(stream(false), { FORCE_COLOR: "1" }).enabled).toBe(true);
    expect(colors(stream(true), { FORCE_COLOR: "0", NO_COLOR: "1" }).enabled).toBe(false);
    expect(colors(stream(false), {}).red("x")).toBe("x");
  });
});
