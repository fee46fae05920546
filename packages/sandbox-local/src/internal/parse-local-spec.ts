import { resolve } from "node:path";
import { SandboxError } from "@openrath/core";
import type { LocalIsolation, LocalSandboxSpec } from "../local-sandbox.js";

const KNOWN = ["workspace", "env", "isolation", "inheritEnv", "timeoutMs"];

function invalid(field: string, value: unknown, valid: string): SandboxError {
  return new SandboxError(
    "invalid_spec",
    `The "local" sandbox spec field "${field}" is ${JSON.stringify(value) ?? String(value)}; ${valid}.`,
    { details: { field, value } },
  );
}

/**
 * Checks and normalizes a `local` sandbox spec: `undefined` is `{}`, unknown fields are refused
 * (a misspelt `workdir` would otherwise silently give a temporary workspace), `workspace` becomes
 * absolute and `isolation` is filled in with the backend's default.
 *
 * @param defaultIsolation - the backend's isolation; a spec may tighten it, never loosen it.
 * @throws {SandboxError} `invalid_spec` naming the bad field.
 */
export function parseLocalSpec(spec: unknown, defaultIsolation: LocalIsolation): LocalSandboxSpec {
  if (spec === undefined || spec === null) return { isolation: defaultIsolation };
  if (typeof spec !== "object" || Array.isArray(spec)) {
    throw new SandboxError(
      "invalid_spec",
      `The "local" sandbox spec must be an object such as { workspace: "./work" } or undefined, got ${JSON.stringify(spec)}.`,
      { details: { value: spec } },
    );
  }
  const raw = spec as Record<string, unknown>;
  for (const key of Object.keys(raw)) {
    if (!KNOWN.includes(key) && raw[key] !== undefined) {
      throw invalid(key, raw[key], `it is not a field of the spec; the fields are ${KNOWN.join(", ")}`);
    }
  }
  const out: { -readonly [K in keyof LocalSandboxSpec]: LocalSandboxSpec[K] } = {};

  if (raw.workspace !== undefined) {
    if (typeof raw.workspace !== "string" || raw.workspace === "" || raw.workspace.includes("\0")) {
      throw invalid("workspace", raw.workspace, "use a directory path (it is created when missing)");
    }
    out.workspace = resolve(raw.workspace);
  }

  if (raw.env !== undefined) {
    if (typeof raw.env !== "object" || raw.env === null || Array.isArray(raw.env)) {
      throw invalid("env", raw.env, 'use an object of string values such as { LANG: "C.UTF-8" }');
    }
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(raw.env)) {
      if (name === "" || name.includes("=") || name.includes("\0")) {
        throw invalid(`env.${name}`, name, "a variable name must be non-empty without '=' or NUL");
      }
      if (typeof value !== "string" || value.includes("\0")) {
        throw invalid(`env.${name}`, value, "a variable's value must be a string without NUL bytes");
      }
      env[name] = value;
    }
    out.env = env;
  }

  const isolation = raw.isolation ?? defaultIsolation;
  if (isolation !== "none" && isolation !== "bubblewrap") {
    throw invalid("isolation", isolation, 'use "none" or "bubblewrap"');
  }
  if (defaultIsolation === "bubblewrap" && isolation === "none") {
    throw invalid(
      "isolation",
      isolation,
      'this backend was created with localSandbox({ isolation: "bubblewrap" }) and its capabilities promise no network; a spec may tighten isolation, never loosen it. Drop the field, or register localSandbox() for unisolated sandboxes',
    );
  }
  out.isolation = isolation;

  if (raw.inheritEnv !== undefined) {
    if (typeof raw.inheritEnv !== "boolean") throw invalid("inheritEnv", raw.inheritEnv, "use true or false");
    out.inheritEnv = raw.inheritEnv;
  }

  if (raw.timeoutMs !== undefined) {
    if (typeof raw.timeoutMs !== "number" || !Number.isFinite(raw.timeoutMs) || raw.timeoutMs <= 0) {
      throw invalid(
        "timeoutMs",
        raw.timeoutMs,
        "use a positive number of milliseconds, or leave it out for no timeout",
      );
    }
    out.timeoutMs = raw.timeoutMs;
  }
  return out;
}
