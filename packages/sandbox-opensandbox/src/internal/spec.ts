import { SandboxError } from "@openrath/core";

/**
 * What `session.to("opensandbox", spec)` takes: the sandbox to create on the OpenSandbox server.
 * Every field is optional; `parseSpec` fills in the defaults.
 */
export interface OpenSandboxSpec {
  /** Container image (default `opensandbox/code-interpreter:v1.1.0`, which runs Python cells). */
  readonly image?: string;
  /**
   * Command the container starts with (default `["/opt/code-interpreter/code-interpreter.sh"]`
   * for the default image, `["tail", "-f", "/dev/null"]` for any other).
   */
  readonly entrypoint?: readonly string[];
  /** Environment of every process in the sandbox. */
  readonly env?: Readonly<Record<string, string>>;
  /** Resource limits such as `{ cpu: "500m", memory: "512Mi" }` (default `{ cpu: "1", memory: "2Gi" }`). */
  readonly resourceLimits?: Readonly<Record<string, string>>;
  /**
   * Seconds the sandbox lives without renewal (at least 60, default 600). While it is open, the
   * adapter keeps pushing the expiry this far into the future, so a crashed client leaves a
   * sandbox that expires on its own within this time.
   */
  readonly timeoutSeconds?: number;
  /** Labels for the sandbox (Kubernetes label rules; the `opensandbox.io/` prefix is reserved). */
  readonly metadata?: Readonly<Record<string, string>>;
  /** Absolute workspace path inside the sandbox, created at open (default `/workspace`). */
  readonly workspace?: string;
  /** Seconds between expiry renewals (default half of `timeoutSeconds`; below `timeoutSeconds`). */
  readonly renewEverySeconds?: number;
  /**
   * Whether the image runs execd's code interpreter (`POST /code`, Jupyter kernels). Default: true
   * for the default image, false for others; without it Python runs as `python3 -c` through
   * `/command`.
   */
  readonly codeInterpreter?: boolean;
}

/** A spec with every default filled in. */
export interface ResolvedOpenSandboxSpec {
  readonly image: string;
  readonly entrypoint: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly resourceLimits: Readonly<Record<string, string>>;
  readonly timeoutSeconds: number;
  readonly metadata: Readonly<Record<string, string>>;
  readonly workspace: string;
  readonly renewEverySeconds: number;
  readonly codeInterpreter: boolean;
}

/** The image OpenRath defaults to: Python, Node and friends plus Jupyter kernels behind execd's `/code`. */
export const DEFAULT_IMAGE = "opensandbox/code-interpreter:v1.1.0";
const CODE_INTERPRETER_ENTRYPOINT = ["/opt/code-interpreter/code-interpreter.sh"];
const PLAIN_ENTRYPOINT = ["tail", "-f", "/dev/null"];
const DEFAULT_RESOURCES = { cpu: "1", memory: "2Gi" };
const KEYS = new Set([
  "image",
  "entrypoint",
  "env",
  "resourceLimits",
  "timeoutSeconds",
  "metadata",
  "workspace",
  "renewEverySeconds",
  "codeInterpreter",
]);

function invalid(field: string, value: unknown, rule: string): SandboxError {
  return new SandboxError(
    "invalid_spec",
    `Invalid opensandbox spec: "${field}" ${rule}; got ${describe(value)}.`,
    { details: { field, value } },
  );
}

function describe(value: unknown): string {
  if (value === undefined) return "undefined";
  try {
    const text = JSON.stringify(value);
    return text.length > 80 ? `${text.slice(0, 77)}...` : text;
  } catch {
    return String(value);
  }
}

function stringMap(field: string, value: unknown, keyRule?: (key: string) => string | undefined) {
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalid(field, value, "must be an object of string values");
  }
  const out: Record<string, string> = {};
  for (const [key, entry] of Object.entries(value)) {
    if (typeof entry !== "string") throw invalid(`${field}.${key}`, entry, "must be a string");
    const problem = keyRule?.(key);
    if (problem) throw invalid(field, value, problem);
    out[key] = entry;
  }
  return out;
}

/**
 * Checks a spec and fills in its defaults.
 *
 * @throws {SandboxError} `invalid_spec` naming the bad field.
 */
export function parseOpenSandboxSpec(spec: unknown): ResolvedOpenSandboxSpec {
  if (spec === undefined || spec === null) spec = {};
  if (typeof spec !== "object" || Array.isArray(spec)) {
    throw new SandboxError(
      "invalid_spec",
      `An opensandbox spec must be an object such as { image: "python:3.12" }; got ${describe(spec)}.`,
      { details: { value: spec } },
    );
  }
  const s = spec as Record<string, unknown>;
  for (const key of Object.keys(s)) {
    if (!KEYS.has(key)) {
      throw new SandboxError(
        "invalid_spec",
        `Invalid opensandbox spec: unknown field "${key}". Valid fields: ${[...KEYS].join(", ")}.`,
        { details: { field: key } },
      );
    }
  }
  if (s.image !== undefined && (typeof s.image !== "string" || s.image.trim() === "")) {
    throw invalid("image", s.image, 'must be a non-empty image reference such as "python:3.12"');
  }
  const image = (s.image as string | undefined) ?? DEFAULT_IMAGE;
  if (
    s.entrypoint !== undefined &&
    (!Array.isArray(s.entrypoint) ||
      s.entrypoint.length === 0 ||
      s.entrypoint.some((part) => typeof part !== "string" || part === ""))
  ) {
    throw invalid("entrypoint", s.entrypoint, "must be a non-empty array of non-empty strings");
  }
  if (s.codeInterpreter !== undefined && typeof s.codeInterpreter !== "boolean") {
    throw invalid("codeInterpreter", s.codeInterpreter, "must be a boolean");
  }
  const codeInterpreter = (s.codeInterpreter as boolean | undefined) ?? image === DEFAULT_IMAGE;
  const entrypoint =
    (s.entrypoint as string[] | undefined) ??
    (image === DEFAULT_IMAGE ? CODE_INTERPRETER_ENTRYPOINT : PLAIN_ENTRYPOINT);
  const env = stringMap("env", s.env, (key) =>
    key === "" || key.includes("=") || key.includes("\0")
      ? `has an invalid variable name ${describe(key)}`
      : undefined,
  );
  const resourceLimits = stringMap("resourceLimits", s.resourceLimits);
  const metadata = stringMap("metadata", s.metadata, (key) =>
    key.startsWith("opensandbox.io/")
      ? `uses the reserved key prefix "opensandbox.io/" (${describe(key)})`
      : undefined,
  );
  const timeout = s.timeoutSeconds ?? 600;
  if (typeof timeout !== "number" || !Number.isInteger(timeout) || timeout < 60) {
    throw invalid("timeoutSeconds", timeout, "must be a whole number of seconds, at least 60");
  }
  const renew = s.renewEverySeconds ?? timeout / 2;
  if (typeof renew !== "number" || !Number.isFinite(renew) || renew <= 0 || renew >= timeout) {
    throw invalid(
      "renewEverySeconds",
      renew,
      `must be a positive number of seconds below timeoutSeconds (${timeout})`,
    );
  }
  const workspace = s.workspace ?? "/workspace";
  if (
    typeof workspace !== "string" ||
    !workspace.startsWith("/") ||
    workspace.includes("\0") ||
    workspace.split("/").some((part) => part === "." || part === "..")
  ) {
    throw invalid(
      "workspace",
      workspace,
      'must be an absolute path without "." or ".." parts, such as "/workspace"',
    );
  }
  const normalized = workspace.replace(/\/+/g, "/").replace(/\/$/, "");
  if (normalized === "") throw invalid("workspace", workspace, "must not be the root directory");
  return {
    image,
    entrypoint: [...entrypoint],
    env: env ?? {},
    resourceLimits: resourceLimits ?? { ...DEFAULT_RESOURCES },
    timeoutSeconds: timeout,
    metadata: metadata ?? {},
    workspace: normalized,
    renewEverySeconds: renew,
    codeInterpreter,
  };
}
