import { OpenRathError } from "@openrath/core";
import { expect } from "vitest";

function preview(value: unknown): string {
  if (value instanceof Uint8Array) return `${value.length} bytes`;
  const text = JSON.stringify(value ?? null);
  return text && text.length > 300 ? `${text.slice(0, 300)}…` : String(text);
}

function describeError(error: unknown): string {
  if (OpenRathError.isInstance(error)) return `${error.name} code "${error.code}": ${error.message}`;
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return preview(error);
}

/**
 * Calls `run` and asserts that the promise it returns rejects with an OpenRath error of `code`
 * (checked with `OpenRathError.isInstance`, so any installed copy of core counts). A synchronous
 * throw fails too: backend methods return promises, and callers chain `.catch` on them.
 *
 * @param what - names the call in failure messages, such as `readFile("../x")`.
 * @param kind - the error class named in messages, such as `SandboxError`.
 * @returns the error, for further assertions on its details.
 */
export async function expectOpenRathError(
  run: () => Promise<unknown>,
  code: string,
  what: string,
  kind = "an OpenRath error",
): Promise<OpenRathError> {
  let pending: Promise<unknown>;
  try {
    pending = run();
  } catch (error) {
    return expect.fail(
      `${what} threw synchronously (${describeError(error)}); it must return a promise that rejects with ${kind} code "${code}".`,
    );
  }
  let value: unknown;
  try {
    value = await pending;
  } catch (error) {
    if (OpenRathError.isInstance(error, code)) return error;
    return expect.fail(`${what} rejected with ${describeError(error)}; expected ${kind} code "${code}".`);
  }
  return expect.fail(
    `${what} resolved with ${preview(value)}; expected it to reject with ${kind} code "${code}".`,
  );
}
