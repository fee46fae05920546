import type { OpenRathError, SandboxErrorCode } from "@openrath/core";
import { expectOpenRathError } from "../../internal/expect-error.js";

/** Asserts that `run()` rejects with a SandboxError of `code` (see {@link expectOpenRathError}). */
export function expectSandboxError(
  run: () => Promise<unknown>,
  code: SandboxErrorCode,
  what: string,
): Promise<OpenRathError> {
  return expectOpenRathError(run, code, what, "SandboxError");
}
