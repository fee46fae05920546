import { programsOfArgv, programsOfLine, SHELLS } from "./command-programs.js";
import { OpenRathError } from "./errors.js";

/**
 * Limits on what an agent's tools may do, checked before each call's body runs. A denied call
 * goes back to the model as a `tool_policy_denied` result and does not count against `maxCalls`.
 *
 * The command lists apply to every way the built-in tools run programs in the sandbox: shell
 * lines and argv of `run_shell_command` (and of any tool with a `cmd` argument), wrappers that
 * run another program (`env`, `sudo`, `xargs`, `sh -c`, `find -exec`, …), and `run_code`, whose
 * language counts as the program it runs (`python`) and whose shell-language code is read as
 * shell lines. They are a guard-rail, not a boundary: an allowed program can still start others
 * (`python -c`, `make`, `git` hooks), so the sandbox's isolation is what contains a tool. Prefer
 * `commandAllow` with programs that do not run others; a deny-list only stops what it names.
 */
export interface ToolPolicy {
  /** Only these tools may run (by name). */
  readonly allowTools?: readonly string[];
  /** `path` and `cwd` arguments must lie under one of these workspace-relative directories. */
  readonly fsRoots?: readonly string[];
  /** Every program a call runs (wrappers included) must be one of these. Not with `commandDeny`. */
  readonly commandAllow?: readonly string[];
  /** No program a call runs (wrappers looked through) may be one of these. Advisory: see above. */
  readonly commandDeny?: readonly string[];
  /**
   * Most tool calls (that pass the other checks) per session: the calls already in the session's
   * transcript count (a fork starts from its parent's count), so a conversation run again does not
   * start afresh.
   */
  readonly maxCalls?: number;
}

/** Checks a policy's own consistency. @throws `invalid_argument` */
export function checkToolPolicy(policy: ToolPolicy): ToolPolicy {
  if (policy.commandAllow && policy.commandDeny) {
    throw new OpenRathError("invalid_argument", "A tool policy takes commandAllow or commandDeny, not both.");
  }
  if (policy.maxCalls !== undefined && !(Number.isInteger(policy.maxCalls) && policy.maxCalls >= 0)) {
    throw new OpenRathError(
      "invalid_argument",
      `Tool policy maxCalls must be a whole number >= 0, got ${policy.maxCalls}.`,
    );
  }
  return policy;
}

function normalize(path: string): string | undefined {
  const out: string[] = [];
  for (const part of path.replace(/^\/+/, "").split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.length === 0) return undefined;
      out.pop();
    } else out.push(part);
  }
  return out.join("/");
}

/** The programs a call runs: a `cmd` (shell line or argv) of any tool, or `run_code`'s interpreter and, for shell languages, its code. */
function programsOfCall(tool: string, a: Record<string, unknown>): string[] | undefined | null {
  if (typeof a.cmd === "string") return programsOfLine(a.cmd);
  if (Array.isArray(a.cmd)) return programsOfArgv(a.cmd);
  if (tool === "run_code" && typeof a.code === "string") {
    const language = (typeof a.language === "string" ? a.language : "python").toLowerCase();
    if (!SHELLS.has(language)) return [language];
    const inner = programsOfLine(a.code);
    return inner === undefined ? undefined : [language === "shell" ? "sh" : language, ...inner];
  }
  return null;
}

/**
 * Why `policy` denies calling `tool` with `args` after `calls` allowed calls, or `undefined`.
 */
export function toolPolicyDenial(
  policy: ToolPolicy,
  tool: string,
  args: unknown,
  calls: number,
): string | undefined {
  if (policy.allowTools && !policy.allowTools.includes(tool)) {
    return `tool "${tool}" is not allowed; allowed: ${policy.allowTools.join(", ") || "(none)"}`;
  }
  const a = (typeof args === "object" && args !== null ? args : {}) as Record<string, unknown>;
  if (policy.fsRoots) {
    const roots = policy.fsRoots.map((r) => normalize(r) ?? "");
    for (const key of ["path", "cwd"]) {
      if (typeof a[key] !== "string") continue;
      const path = normalize(a[key] as string);
      const inside =
        path !== undefined &&
        roots.some((root) => root === "" || path === root || path.startsWith(`${root}/`));
      if (!inside)
        return `${key} ${JSON.stringify(a[key])} is outside the allowed roots ${roots.map((r) => r || ".").join(", ")}`;
    }
  }
  const found = policy.commandAllow || policy.commandDeny ? programsOfCall(tool, a) : null;
  if (found !== null) {
    if (found === undefined)
      return "the command runs something that cannot be read from it (a substitution, a variable or glob as the program, eval or source), which a command policy does not allow";
    if (policy.commandAllow) {
      const bad = found.find((p) => !policy.commandAllow!.includes(p));
      if (bad !== undefined)
        return `command "${bad}" is not allowed; allowed: ${policy.commandAllow.join(", ")}`;
    }
    if (policy.commandDeny) {
      const bad = found.find((p) => policy.commandDeny!.includes(p));
      if (bad !== undefined) return `command "${bad}" is denied`;
    }
  }
  if (policy.maxCalls !== undefined && calls >= policy.maxCalls)
    return `the call budget of ${policy.maxCalls} tool calls is spent`;
  return undefined;
}
