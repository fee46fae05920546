import type { MemoryV1 } from "@openrath/core";
import { describeGroup, type GroupBase } from "../../internal/describe-group.js";
import { storeOpeners } from "../../internal/store-openers.js";
import type { MemorySuiteContext } from "../suite-context.js";

/** What a group's body uses to register tests and open stores. */
export interface GroupApi extends GroupBase<MemoryV1> {
  /** Opens a fresh, empty store through the context's `create`; it is closed after the test. */
  open(): Promise<MemoryV1>;
  /**
   * Opens the store the latest {@link GroupApi.open} made once more, through the context's
   * `reopen`; it is closed after the test.
   *
   * @throws when the caller gave no `reopen`, naming the claim that needs it.
   */
  reopen(claim: "persistence" | "sharedWriters"): Promise<MemoryV1>;
}

/** Registers a memory group: every store a test opens is closed after it. */
export function defineGroup(
  context: MemorySuiteContext,
  title: string,
  body: (group: GroupApi) => void,
): void {
  describeGroup<MemoryV1>(context, title, "store", (base) =>
    body({
      ...base,
      ...storeOpeners(base, context, {
        suite: "describeMemoryConformance",
        type: "MemoryV1",
        handle: "the store",
      }),
    }),
  );
}
