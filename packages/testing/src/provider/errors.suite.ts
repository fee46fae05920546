import type { ProviderDelta } from "@openrath/core";
import { expect } from "vitest";
import type { StreamFault, WireErrorKind } from "./fixture.js";
import { drain, providerFailure } from "./internal/collect.js";
import { defineGroup } from "./internal/define-group.js";
import { question, threePieces } from "./responses.suite.js";
import type { ProviderSuiteContext } from "./suite-context.js";

const httpCases: readonly [WireErrorKind, string, boolean][] = [
  ["rate_limited", "provider_rate_limited", true],
  ["unavailable", "provider_unavailable", true],
  ["bad_request", "provider_bad_request", false],
  ["auth", "provider_auth", false],
];

/**
 * Errors: each HTTP failure kind maps to its code, retryability and status and carries the
 * server's message, for `complete` and for a stream that fails before it opens; `Retry-After`
 * reaches `retryAfterMs`; a stream cut, ended early or carrying an error event fails with a
 * `ProviderError` after the deltas it delivered, retryable only when nothing was delivered.
 */
export function errorsSuite(context: ProviderSuiteContext): void {
  defineGroup(context, "errors", (group) => {
    for (const [kind, code, retryable] of httpCases) {
      group.test(
        `maps an HTTP ${kind} failure to ${code} (retryable: ${retryable}) with the server's message`,
        async () => {
          const { fixture, provider } = await group.open();
          const message = `conformance ${kind} failure 7f3a`;
          fixture.enqueue({ type: "error", error: kind, message });
          const error = await providerFailure(() => provider.complete(question), "complete()");
          expect({ code: error.code, retryable: error.retryable }).toEqual({ code, retryable });
          expect(
            typeof error.status === "number" && error.status >= 400,
            "error.status is the HTTP status",
          ).toBe(true);
          expect(error.message).toContain(message);
          if (context.capabilities.streaming) {
            fixture.enqueue({ type: "error", error: kind, message });
            const streamed = await providerFailure(
              (seen) => drain(provider.stream!(question), seen),
              "stream()",
            );
            expect({ code: streamed.code, retryable: streamed.retryable }).toEqual({ code, retryable });
          }
        },
      );
    }

    group.test("reads Retry-After into retryAfterMs", async () => {
      const { fixture, provider } = await group.open();
      fixture.enqueue({ type: "error", error: "rate_limited", message: "slow down", retryAfterSeconds: 3 });
      const error = await providerFailure(() => provider.complete(question), "complete()");
      expect(error.retryAfterMs).toBe(3000);
    });

    const faults: readonly [string, StreamFault, boolean][] = [
      ["a stream cut before any delta is a retryable failure", { kind: "cut", afterText: 0 }, true],
      [
        "a stream cut after deltas fails after them and is not retryable",
        { kind: "cut", afterText: 2 },
        false,
      ],
      [
        "a stream that ends without finishing fails after its deltas and is not retryable",
        { kind: "end", afterText: 2 },
        false,
      ],
      [
        "an error event after deltas fails after them and is not retryable, whatever its kind",
        { kind: "error", afterText: 2, error: "unavailable" },
        false,
      ],
      [
        "a rate-limit event after deltas is not retryable either",
        { kind: "error", afterText: 1, error: "rate_limited" },
        false,
      ],
    ];
    for (const [title, fault, retryable] of faults) {
      if (!context.capabilities.streaming) {
        group.skip(title, "the provider has no stream()");
        continue;
      }
      group.test(title, async () => {
        const { fixture, provider } = await group.open();
        fixture.enqueue({ type: "stream", turn: threePieces, fault });
        const seen: ProviderDelta[] = [];
        const error = await providerFailure((s) => drain(provider.stream!(question), s), "stream()", seen);
        const text = seen.flatMap((d) => (d.type === "text" ? [d.text] : []));
        expect(text, "the deltas sent before the fault").toEqual(threePieces.text!.slice(0, fault.afterText));
        expect(
          seen.some((d) => d.type === "response"),
          "no response after a fault",
        ).toBe(false);
        expect(error.retryable, `retryable after ${fault.afterText} text deltas`).toBe(retryable);
      });
    }
  });
}
