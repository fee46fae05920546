import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";

/**
 * The absolute path of the executable `name` on `searchPath` (a `PATH` value), like `command -v`;
 * `undefined` when none is found. A name with a `/` is checked as is.
 */
export function findExecutable(name: string, searchPath: string): string | undefined {
  const candidates = name.includes("/")
    ? [name]
    : searchPath
        .split(delimiter)
        .filter((dir) => isAbsolute(dir))
        .map((dir) => join(dir, name));
  for (const candidate of candidates) {
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not there or not executable: try the next directory
    }
  }
  return undefined;
}
