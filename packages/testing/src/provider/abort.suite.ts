import type { ProviderDelta } from "@openrath/core";
import { expect } from "vitest";
import { drain, providerFailure, requestsArrived } from "./internal/collect.js";
import { defineGroup } from "./internal/define-group.js";
import { question, threePieces } from "./responses.suite.js";
import type { ProviderSuiteContext } from "./suite-context.js";

/**
 * Aborts and timeouts: a signal that already fired sends nothing; one that fires while the
 * server thinks, or mid-stream, rejects with `aborted` and closes the connection; a consumer that
 * stops reading closes it too; a server that never answers ends in a retryable
 * `provider_timeout` after the provider's `timeoutMs`.
 */
export function abortSuite(context: ProviderSuiteContext): void {
  defineGroup(context, "abort and timeout", (group) => {
    const streaming = context.capabilities.streaming;

    group.test("a signal that already fired rejects with aborted and sends nothing", async () => {
      const { fixture, provider } = await group.open();
      const signal = AbortSignal.abort(new Error("caller gave up"));
      const error = await providerFailure(() => provider.complete(question, { signal }), "complete()");
      expect(error.code).toBe("aborted");
      expect(error.retryable).toBe(false);
      if (streaming) {
        const streamed = await providerFailure(
          (seen) => drain(provider.stream!(question, { signal }), seen),
          "stream()",
        );
        expect(streamed.code).toBe("aborted");
      }
      expect(fixture.requests(), "nothing reaches the server").toHaveLength(0);
    });

    group.test(
      "aborting while the server has not answered rejects with aborted and closes the connection",
      async () => {
        const { fixture, provider } = await group.open();
        fixture.enqueue({ type: "hang" });
        const controller = new AbortController();
        const pending = providerFailure(
          () => provider.complete(question, { signal: controller.signal }),
          "complete()",
        );
        await requestsArrived(fixture, 1);
        controller.abort(new Error("caller gave up"));
        const error = await pending;
        expect(error.code).toBe("aborted");
        expect(await fixture.closed(0), "the server sees the connection close early").toBe(true);
      },
    );

    const midStream =
      "aborting mid-stream rejects with aborted after the deltas so far and closes the connection";
    const early = "a consumer that stops reading early closes the connection";
    if (!streaming) {
      group.skip(midStream, "the provider has no stream()");
      group.skip(early, "the provider has no stream()");
    } else {
      group.test(midStream, async () => {
        const { fixture, provider } = await group.open();
        fixture.enqueue({ type: "stream", turn: threePieces, fault: { kind: "hold", afterText: 1 } });
        const controller = new AbortController();
        const seen: ProviderDelta[] = [];
        const error = await providerFailure(
          async (s) => {
            for await (const delta of provider.stream!(question, { signal: controller.signal })) {
              s.push(delta);
              if (delta.type === "text") controller.abort(new Error("caller gave up"));
            }
          },
          "stream()",
          seen,
        );
        expect(error.code).toBe("aborted");
        expect(seen.filter((d) => d.type === "text")).toHaveLength(1);
        expect(await fixture.closed(0)).toBe(true);
      });

      group.test(early, async () => {
        const { fixture, provider } = await group.open();
        fixture.enqueue({ type: "stream", turn: threePieces, fault: { kind: "hold", afterText: 1 } });
        for await (const delta of provider.stream!(question)) if (delta.type === "text") break;
        expect(await fixture.closed(0)).toBe(true);
      });
    }

    const timeout = "a server that never answers ends in a retryable provider_timeout after timeoutMs";
    if (!context.capabilities.timeout) {
      group.skip(timeout, "the provider claims no timeoutMs");
      return;
    }
    group.test(timeout, async () => {
      const { fixture, provider } = await group.open({ timeoutMs: 300 });
      fixture.enqueue({ type: "hang" });
      // The test's own timeout bounds the wait: a provider ignoring timeoutMs never gets here.
      const error = await providerFailure(() => provider.complete(question), "complete()");
      expect(error.code).toBe("provider_timeout");
      expect(error.retryable).toBe(true);
    });
  });
}
