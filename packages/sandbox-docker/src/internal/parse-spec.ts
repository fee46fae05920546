import { SandboxError } from "@openrath/core";
import { checkTimeout } from "@openrath/core/backend";
import type { DockerSandboxSpec } from "../docker-sandbox-spec.js";

/** A spec after {@link parseSpec}: defaults applied, every field checked. */
export interface ParsedSpec extends DockerSandboxSpec {
  readonly image: string;
  readonly env: Readonly<Record<string, string>>;
  readonly workspace: string;
  readonly cpus: number;
  readonly memoryBytes: number;
  readonly pidsLimit: number;
  readonly network: "none";
}

/** Default workspace path inside the container. */
export const DEFAULT_WORKSPACE = "/workspace";
/** Default `pidsLimit`. */
export const DEFAULT_PIDS_LIMIT = 256;
/** Default `cpus`: one core. */
export const DEFAULT_CPUS = 1;
/** Default `memoryBytes`: 1 GiB, swap included (so no swap). */
export const DEFAULT_MEMORY_BYTES = 1024 * 1024 * 1024;
/** Docker refuses memory limits under 6 MiB. */
const MIN_MEMORY_BYTES = 6 * 1024 * 1024;
/** Room for the keep-alive loop, the sandbox's own helper commands and at least one user command. */
const MIN_PIDS_LIMIT = 8;

const FIELDS = [
  "image",
  "env",
  "workspace",
  "cpus",
  "memoryBytes",
  "pidsLimit",
  "network",
  "user",
  "timeoutMs",
];

function invalid(field: string, value: unknown, valid: string): SandboxError {
  const shown = value === undefined ? "undefined" : JSON.stringify(value);
  return new SandboxError("invalid_spec", `Invalid docker sandbox spec: "${field}" is ${shown}; ${valid}.`, {
    details: { field, value, valid },
  });
}

function positiveInteger(field: string, value: unknown, min = 1): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min) {
    throw invalid(field, value, `it must be an integer of at least ${min}`);
  }
  return value;
}

/**
 * Checks a docker sandbox spec and applies the defaults. `undefined` is an empty spec.
 *
 * @param defaultImage - the image used when the spec names none.
 * @throws {SandboxError} `invalid_spec` naming the bad field, its value and what is valid.
 */
export function parseSpec(spec: unknown, defaultImage?: string): ParsedSpec {
  if (spec === undefined || spec === null) spec = {};
  if (typeof spec !== "object" || Array.isArray(spec)) {
    throw new SandboxError(
      "invalid_spec",
      `A docker sandbox spec must be an object such as { image: "python:3.12-slim" }, got ${JSON.stringify(spec)}.`,
      { details: { value: spec } },
    );
  }
  const raw = spec as Record<string, unknown>;
  for (const key of Object.keys(raw)) {
    if (!FIELDS.includes(key)) {
      throw invalid(
        key,
        raw[key],
        `it is not a docker sandbox spec field (valid fields: ${FIELDS.join(", ")})`,
      );
    }
  }

  const image = raw.image ?? defaultImage;
  if (image === undefined) {
    throw invalid(
      "image",
      undefined,
      'name an image that is on the Docker host, such as { image: "python:3.12-slim" }, or give the factory a defaultImage',
    );
  }
  if (typeof image !== "string" || image.length === 0 || /\s|\0/.test(image)) {
    throw invalid(
      "image",
      image,
      "it must be a non-empty image reference without spaces, such as python:3.12-slim",
    );
  }

  const env: Record<string, string> = {};
  if (raw.env !== undefined) {
    if (typeof raw.env !== "object" || raw.env === null || Array.isArray(raw.env)) {
      throw invalid("env", raw.env, 'it must be an object of string values, such as { LANG: "C.UTF-8" }');
    }
    for (const [name, value] of Object.entries(raw.env)) {
      if (name === "" || name.includes("=") || name.includes("\0")) {
        throw invalid(`env.${name}`, value, "variable names must be non-empty, without '=' or NUL");
      }
      if (typeof value !== "string" || value.includes("\0")) {
        throw invalid(`env.${name}`, value, "values must be strings without NUL bytes");
      }
      env[name] = value;
    }
  }

  let workspace = DEFAULT_WORKSPACE;
  if (raw.workspace !== undefined) {
    const value = raw.workspace;
    const parts = typeof value === "string" ? value.split("/").slice(1) : [];
    if (
      typeof value !== "string" ||
      !value.startsWith("/") ||
      [...value].some((char) => char.charCodeAt(0) < 0x20) ||
      value.replace(/\/+$/, "") === "" ||
      parts.some((part, i) => part === "." || part === ".." || (part === "" && i < parts.length - 1))
    ) {
      throw invalid(
        "workspace",
        value,
        'it must be a normalized absolute path other than "/", without control characters, such as "/workspace" or "/home/user/work"',
      );
    }
    workspace = value.replace(/\/+$/, "");
  }

  let cpus = DEFAULT_CPUS;
  if (raw.cpus !== undefined) {
    if (typeof raw.cpus !== "number" || !Number.isFinite(raw.cpus) || raw.cpus <= 0 || raw.cpus * 1e9 < 1e6) {
      throw invalid(
        "cpus",
        raw.cpus,
        "it must be a positive number of cores, at least 0.001, such as 0.5 or 2",
      );
    }
    cpus = raw.cpus;
  }

  const memoryBytes =
    raw.memoryBytes === undefined
      ? DEFAULT_MEMORY_BYTES
      : positiveInteger("memoryBytes", raw.memoryBytes, MIN_MEMORY_BYTES);
  const pidsLimit =
    raw.pidsLimit === undefined
      ? DEFAULT_PIDS_LIMIT
      : positiveInteger("pidsLimit", raw.pidsLimit, MIN_PIDS_LIMIT);

  if (raw.network !== undefined && raw.network !== "none") {
    throw invalid(
      "network",
      raw.network,
      'only "none" is supported: docker sandboxes run without network access (leave it out or pass "none")',
    );
  }

  let user: string | undefined;
  if (raw.user !== undefined) {
    if (
      typeof raw.user !== "string" ||
      !/^[A-Za-z0-9_][A-Za-z0-9_.-]*(:[A-Za-z0-9_][A-Za-z0-9_.-]*)?$/.test(raw.user)
    ) {
      throw invalid(
        "user",
        raw.user,
        'it must be a user name, a uid or "uid:gid", such as "1000:1000" or "node"',
      );
    }
    user = raw.user;
  }

  let timeoutMs: number | null | undefined;
  try {
    const checked = checkTimeout(raw.timeoutMs, "timeoutMs");
    // Infinity is null in a spec, so the spec survives JSON (a session's placement is serialized).
    timeoutMs = checked === undefined ? undefined : Number.isFinite(checked) ? checked : null;
  } catch {
    throw invalid(
      "timeoutMs",
      raw.timeoutMs,
      "it must be a positive number of milliseconds, or null (or Infinity) for no timeout",
    );
  }

  return {
    image,
    env,
    workspace,
    cpus,
    memoryBytes,
    pidsLimit,
    network: "none",
    ...(user === undefined ? {} : { user }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  };
}
