/**
 * The trimmed value of environment variable `name`, or `undefined` when it is unset, blank, or
 * there is no `process` (a browser or a worker).
 */
export function readEnv(name: string): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const value = env?.[name]?.trim();
  return value ? value : undefined;
}
