import type { SandboxV1 } from "@openrath/core";
import { describeGroup, type GroupBase } from "../../internal/describe-group.js";
import type { SandboxSuiteContext } from "../suite-context.js";

/** What a group's body uses to register tests and open sandboxes. */
export interface GroupApi extends GroupBase<SandboxV1> {
  /** Opens a fresh sandbox through the context's `create`; it is closed after the test. */
  open(): Promise<SandboxV1>;
}

/** Registers a sandbox group: every sandbox a test opens or tracks is closed after it. */
export function defineGroup(
  context: SandboxSuiteContext,
  title: string,
  body: (group: GroupApi) => void,
): void {
  describeGroup<SandboxV1>(context, title, "sandbox", (base) =>
    body({ ...base, open: async () => base.track(await context.create()) }),
  );
}
