import { type ProviderDelta, ProviderError, type ProviderResponse } from "@openrath/core";
import { expect } from "vitest";

/** Every delta of `stream`, in order. */
export async function collect(stream: AsyncIterable<ProviderDelta>): Promise<ProviderDelta[]> {
  const out: ProviderDelta[] = [];
  for await (const delta of stream) out.push(delta);
  return out;
}

/** The one `response` a finished stream must end with; fails unless it is the last delta and the only one. */
export function finalResponse(deltas: readonly ProviderDelta[]): ProviderResponse {
  const responses = deltas.filter((d) => d.type === "response");
  expect(responses, "a stream ends with exactly one response event").toHaveLength(1);
  const last = deltas.at(-1);
  expect(last?.type, "the response event is the stream's last").toBe("response");
  return (last as Extract<ProviderDelta, { type: "response" }>).response;
}

/**
 * Runs `run` and returns the {@link ProviderError} it rejects with (deltas a stream yielded on
 * the way are pushed to `seen`); fails when it succeeds or throws anything else.
 */
export async function providerFailure(
  run: (seen: ProviderDelta[]) => Promise<unknown>,
  what: string,
  seen: ProviderDelta[] = [],
): Promise<ProviderError> {
  try {
    await run(seen);
  } catch (error) {
    if (ProviderError.isInstance(error)) return error as ProviderError;
    return expect.fail(
      `${what} failed with ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}; expected a ProviderError.`,
    );
  }
  return expect.fail(`${what} succeeded; expected it to fail with a ProviderError.`);
}

/** Pushes every delta of `stream` to `seen` until it ends or throws. */
export async function drain(stream: AsyncIterable<ProviderDelta>, seen: ProviderDelta[]): Promise<void> {
  for await (const delta of stream) seen.push(delta);
}

/** Waits until `fixture` has received `count` requests (bounded by the test's own timeout). */
export async function requestsArrived(
  fixture: { requests(): readonly unknown[] },
  count: number,
): Promise<void> {
  while (fixture.requests().length < count) await new Promise((resolve) => setTimeout(resolve, 5));
}
