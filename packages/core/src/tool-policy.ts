import { OpenRathError } from "./errors.js";

/**
 * Limits on what an agent's tools may do, checked before each call's body runs. A denied call
 * goes back to the model as a `tool_policy_denied` result and does not count against `maxCalls`.
 */
export interface ToolPolicy {
  /** Only these tools may run (by name). */
  readonly allowTools?: readonly string[];
  /** `path` and `cwd` arguments must lie under one of these workspace-relative directories. */
  readonly fsRoots?: readonly string[];
  /** Every command in a shell line must start with one of these programs. Not with `commandDeny`. */
  readonly commandAllow?: readonly string[];
  /** No command in a shell line may start with one of these programs. */
  readonly commandDeny?: readonly string[];
  /** Most tool calls (that pass the other checks) one agent run may make. */
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

/** The programs a shell line runs: the first word of each `;`, `&&`, `||`, `|` or newline segment. */
function programs(command: string | readonly string[]): string[] | undefined {
  if (Array.isArray(command)) return command.length > 0 ? [String(command[0]).split("/").pop()!] : [];
  const line = String(command);
  // Substitutions run programs we cannot see from the first words.
  if (/`|\$\(|<\(|>\(/.test(line)) return undefined;
  return (
    line
      // Subshells and groups start commands too: "(rm x)", "{ rm x; }".
      .split(/;|&&|\|\||\||\n|&|\(|\)|\{|\}/)
      .map(
        (segment) =>
          segment
            .trim()
            .split(/\s+/)
            .find((word) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) ?? "",
      )
      .filter((word) => word !== "")
      .map((word) => word.split("/").pop()!)
  );
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
  if ((policy.commandAllow || policy.commandDeny) && (typeof a.cmd === "string" || Array.isArray(a.cmd))) {
    const found = programs(a.cmd as string | string[]);
    if (found === undefined) return "command substitution is not allowed under a command policy";
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
