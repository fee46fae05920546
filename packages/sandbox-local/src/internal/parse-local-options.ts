import { OpenRathError } from "@openrath/core";
import type { LocalIsolation, LocalSandboxOptions } from "../local-sandbox.js";

/** {@link LocalSandboxOptions} checked, with defaults filled in. */
export interface LocalSettings {
  readonly isolation: LocalIsolation;
  readonly bwrapPath: string;
  readonly maxOutputBytes: number | undefined;
}

const KNOWN = new Set(["isolation", "bwrapPath", "maxOutputBytes"]);

function bad(field: string, value: unknown, valid: string): OpenRathError {
  return new OpenRathError(
    "invalid_argument",
    `localSandbox({ ${field} }) got ${JSON.stringify(value) ?? String(value)}; ${valid}.`,
    { details: { field, value } },
  );
}

/**
 * Checks the factory options of `localSandbox`.
 *
 * @throws {OpenRathError} `invalid_argument` naming the bad field.
 */
export function parseLocalOptions(options: LocalSandboxOptions): LocalSettings {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new OpenRathError(
      "invalid_argument",
      `localSandbox(options) takes an object such as { isolation: "bubblewrap" }, got ${JSON.stringify(options)}.`,
      { details: { value: options } },
    );
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key))
      throw bad(key, (options as Record<string, unknown>)[key], `known options are ${[...KNOWN].join(", ")}`);
  }
  const { isolation = "none", bwrapPath = "bwrap", maxOutputBytes } = options;
  if (isolation !== "none" && isolation !== "bubblewrap") {
    throw bad("isolation", isolation, 'use "none" or "bubblewrap"');
  }
  if (typeof bwrapPath !== "string" || bwrapPath === "" || bwrapPath.includes("\0")) {
    throw bad("bwrapPath", bwrapPath, "use the path or name of the bubblewrap executable");
  }
  if (
    maxOutputBytes !== undefined &&
    (typeof maxOutputBytes !== "number" || !Number.isSafeInteger(maxOutputBytes) || maxOutputBytes < 0)
  ) {
    throw bad("maxOutputBytes", maxOutputBytes, "use a non-negative integer number of bytes");
  }
  return { isolation, bwrapPath, maxOutputBytes };
}
