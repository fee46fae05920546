import { expect } from "vitest";
import { collect, sha256Hex } from "./internal/bytes.js";
import { defineGroup } from "./internal/define-group.js";
import { expectArtifactError } from "./internal/expect-artifact-error.js";
import type { ArtifactSuiteContext } from "./suite-context.js";

/** Lifecycle: `close` is idempotent and every method of a closed store rejects with `artifact_closed`. */
export function lifecycleSuite(context: ArtifactSuiteContext): void {
  defineGroup(context, "lifecycle", (group) => {
    group.test("close is idempotent and every method then rejects with artifact_closed", async () => {
      const store = await group.open();
      const { digest } = await store.put("acme", "before close");
      await store.close();
      await store.close();
      await expectArtifactError(() => store.put("acme", "x"), "artifact_closed", "put after close");
      await expectArtifactError(() => store.get("acme", digest), "artifact_closed", "get after close");
      await expectArtifactError(() => store.stat("acme", digest), "artifact_closed", "stat after close");
      await expectArtifactError(() => store.delete("acme", digest), "artifact_closed", "delete after close");
      await expectArtifactError(() => collect(store.list()), "artifact_closed", "list after close");
      await expectArtifactError(
        () => store.sweepIncomplete(),
        "artifact_closed",
        "sweepIncomplete after close",
      );
      expect(sha256Hex("before close")).toBe(digest);
    });
  });
}
