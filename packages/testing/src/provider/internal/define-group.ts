import type { ProviderV1 } from "@openrath/core";
import { describeGroup, type GroupBase } from "../../internal/describe-group.js";
import type { ProviderWireFixture } from "../fixture.js";
import type { ConformanceProviderOptions, ProviderSuiteContext } from "../suite-context.js";

/** A test's wire server and the provider pointed at it. */
export interface Harness {
  readonly fixture: ProviderWireFixture;
  readonly provider: ProviderV1;
}

/** What a group's body uses to register tests and start servers. */
export interface GroupApi extends GroupBase<ProviderWireFixture> {
  /** Starts a fresh wire server (closed after the test) and builds the provider against it. */
  open(options?: ConformanceProviderOptions): Promise<Harness>;
}

/** Registers a provider group: every server a test starts is closed after it. */
export function defineGroup(
  context: ProviderSuiteContext,
  title: string,
  body: (group: GroupApi) => void,
): void {
  describeGroup<ProviderWireFixture>(context, title, "wire server", (base) =>
    body({
      ...base,
      async open(options = {}) {
        const fixture = base.track(await context.start());
        return { fixture, provider: context.create(fixture, options) };
      },
    }),
  );
}
