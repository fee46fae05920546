import type { MemoryErrorCode, OpenRathError } from "@openrath/core";
import { expectOpenRathError } from "../../internal/expect-error.js";

/** Asserts that `run()` rejects with an OpenRath error of `code` (see {@link expectOpenRathError}). */
export function expectMemoryError(
  run: () => Promise<unknown>,
  code: MemoryErrorCode | "invalid_argument",
  what: string,
): Promise<OpenRathError> {
  return expectOpenRathError(run, code, what);
}
