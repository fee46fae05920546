import type { OpenRathError } from "@openrath/core";
import type { ArtifactErrorCode } from "@openrath/runtime-durable/store";
import { expectOpenRathError } from "../../internal/expect-error.js";

/** Asserts that `run()` rejects with an artifact error of `code` (see {@link expectOpenRathError}). */
export function expectArtifactError(
  run: () => Promise<unknown>,
  code: ArtifactErrorCode,
  what: string,
): Promise<OpenRathError> {
  return expectOpenRathError(run, code, what, "ArtifactError");
}
