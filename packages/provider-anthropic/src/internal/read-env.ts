/**
 * The value of environment variable `name`, or `undefined` when it is unset, empty or there is no
 * `process` (a browser or an edge runtime).
 */
export function readEnv(name: string): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const value = env?.[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}
