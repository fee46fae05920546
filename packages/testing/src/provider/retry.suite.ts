import { callProvider, streamProvider } from "@openrath/core/backend";
import { expect } from "vitest";
import { collect, finalResponse, providerFailure } from "./internal/collect.js";
import { defineGroup } from "./internal/define-group.js";
import { question, threePieces } from "./responses.suite.js";
import type { ProviderSuiteContext } from "./suite-context.js";

const fast = { baseDelayMs: 1, maxDelayMs: 200 };

/**
 * Retry through core: `callProvider` and `streamProvider` retry what the provider marks
 * retryable, waiting the server's `Retry-After`; the provider (and its SDK) never retries on its
 * own, so each attempt is exactly one request; a failure that is not retryable is tried once.
 */
export function retrySuite(context: ProviderSuiteContext): void {
  defineGroup(context, "retry", (group) => {
    group.test(
      "callProvider retries a rate limit after the server's Retry-After and returns one response",
      async () => {
        const { fixture, provider } = await group.open();
        fixture.enqueue(
          { type: "error", error: "rate_limited", message: "slow down", retryAfterSeconds: 0.05 },
          { type: "reply", turn: threePieces },
        );
        const delays: number[] = [];
        const response = await callProvider(provider, question, {
          retry: { ...fast, onRetry: (info) => delays.push(info.delayMs) },
        });
        expect(response.content).toBe(threePieces.text!.join(""));
        expect(delays, "the wait is the server's Retry-After").toEqual([50]);
        expect(fixture.requests()).toHaveLength(2);
      },
    );

    group.test("the provider never retries on its own: one request per attempt", async () => {
      const { fixture, provider } = await group.open();
      fixture.enqueue({ type: "error", error: "unavailable", message: "down" });
      await providerFailure(
        () => callProvider(provider, question, { retry: { maxAttempts: 1 } }),
        "callProvider()",
      );
      expect(fixture.requests()).toHaveLength(1);
    });

    group.test("a failure that is not retryable is tried once", async () => {
      const { fixture, provider } = await group.open();
      fixture.enqueue(
        { type: "error", error: "bad_request", message: "bad field" },
        { type: "reply", turn: threePieces },
      );
      const error = await providerFailure(
        () => callProvider(provider, question, { retry: fast }),
        "callProvider()",
      );
      expect(error.code).toBe("provider_bad_request");
      expect(fixture.requests()).toHaveLength(1);
    });

    if (!context.capabilities.streaming) {
      group.skip("streamProvider retries a failure before the first delta and streams once", "no stream()");
      group.skip("streamProvider does not retry a stream that broke after its deltas", "no stream()");
      return;
    }
    group.test("streamProvider retries a failure before the first delta and streams once", async () => {
      const { fixture, provider } = await group.open();
      fixture.enqueue(
        { type: "error", error: "unavailable", message: "overloaded" },
        { type: "stream", turn: threePieces, fault: { kind: "cut", afterText: 0 } },
        { type: "stream", turn: threePieces },
      );
      const deltas = await collect(streamProvider(provider, question, { retry: fast }));
      const text = deltas.flatMap((d) => (d.type === "text" ? [d.text] : []));
      expect(text, "each delta once").toEqual(threePieces.text);
      expect(finalResponse(deltas).content).toBe(threePieces.text!.join(""));
      expect(fixture.requests()).toHaveLength(3);
    });

    group.test("streamProvider does not retry a stream that broke after its deltas", async () => {
      const { fixture, provider } = await group.open();
      fixture.enqueue(
        { type: "stream", turn: threePieces, fault: { kind: "error", afterText: 1, error: "unavailable" } },
        { type: "stream", turn: threePieces },
      );
      await providerFailure(async (seen) => {
        for await (const delta of streamProvider(provider, question, { retry: fast })) seen.push(delta);
      }, "streamProvider()");
      expect(fixture.requests()).toHaveLength(1);
    });
  });
}
