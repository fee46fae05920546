import { SandboxError } from "./sandbox.js";

/*
 * The argument checks of sandbox calls, written once so that the same bad call gets the same
 * `invalid_argument` error on every backend. Backends call them before anything runs.
 */

/**
 * Checks what `exec` was given: a shell line (a string) or an argv (a non-empty array of strings).
 * Returns it unchanged. Whether an argv may carry NUL bytes is the backend's to decide.
 *
 * @throws {SandboxError} `invalid_argument` with the command in `details`.
 */
export function checkCommand(command: unknown): string | readonly string[] {
  if (typeof command === "string") return command;
  if (Array.isArray(command) && command.length > 0 && command.every((part) => typeof part === "string")) {
    return command as readonly string[];
  }
  throw new SandboxError(
    "invalid_argument",
    `exec takes a shell string or a non-empty array of strings (argv), got ${JSON.stringify(command)}.`,
    { details: { command } },
  );
}

/**
 * Checks what `writeFile` was given to write to `path`: a string (written as UTF-8) or bytes.
 * Returns it unchanged.
 *
 * @throws {SandboxError} `invalid_argument` with the path in `details`.
 */
export function checkWriteData(data: unknown, path: string): string | Uint8Array {
  if (typeof data === "string" || data instanceof Uint8Array) return data;
  throw new SandboxError(
    "invalid_argument",
    `writeFile takes a string or a Uint8Array, got ${data === null ? "null" : typeof data}.`,
    { details: { path } },
  );
}

/**
 * Checks the code `runCode` was given to run in `language`: a string. Returns it unchanged.
 *
 * @throws {SandboxError} `invalid_argument` with the language in `details`.
 */
export function checkCode(code: unknown, language: string): string {
  if (typeof code === "string") return code;
  throw new SandboxError("invalid_argument", `runCode takes the code as a string, got ${typeof code}.`, {
    details: { language },
  });
}
