import type { ArtifactStoreV1 } from "@openrath/runtime-durable/store";
import { describeGroup, type GroupBase } from "../../internal/describe-group.js";
import { storeOpeners } from "../../internal/store-openers.js";
import type { ArtifactSuiteContext, ArtifactTamper } from "../suite-context.js";

/** What a group's body uses to register tests and open stores. */
export interface GroupApi extends GroupBase<ArtifactStoreV1> {
  /** Opens a fresh, empty store through the context's `create`; it is closed after the test. */
  open(): Promise<ArtifactStoreV1>;
  /**
   * Opens a second handle to the store the latest {@link GroupApi.open} made, through the
   * context's `reopen`; it is closed after the test.
   *
   * @throws when the caller gave no `reopen`, naming the claim that needs it.
   */
  reopen(claim: "concurrentWriters"): Promise<ArtifactStoreV1>;
  /** Registers a test that needs the tamper hooks; without them it is skipped with the reason. */
  tampering(title: string, fn: (tamper: ArtifactTamper) => Promise<void>, timeoutMs?: number): void;
}

/** Registers an artifact group: every store a test opens is closed after it. */
export function defineGroup(
  context: ArtifactSuiteContext,
  title: string,
  body: (group: GroupApi) => void,
): void {
  describeGroup<ArtifactStoreV1>(context, title, "store", (base) =>
    body({
      ...base,
      ...storeOpeners(base, context, {
        suite: "describeArtifactConformance",
        type: "ArtifactStoreV1",
        handle: "a second handle to the store",
      }),
      tampering(testTitle, fn, timeoutMs) {
        const tamper = context.tamper;
        if (tamper === undefined) {
          base.skip(testTitle, "no tamper hooks given to describeArtifactConformance");
          return;
        }
        base.test(testTitle, () => fn(tamper), timeoutMs);
      },
    }),
  );
}
