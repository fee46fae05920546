import { dirname, resolve } from "node:path";
import { OpenRathError, SessionLogError } from "../../errors.js";
import { isSessionId, previewString, SESSION_ID_FORMAT } from "../../internal/id.js";

/**
 * Throws `invalid_session_id` unless `id` has the session id format. Every file name core builds
 * from a session id goes through this first.
 */
export function checkSessionId(id: unknown, where: string): asserts id is string {
  if (isSessionId(id)) return;
  const shown = typeof id === "string" ? previewString(id) : typeof id;
  throw new OpenRathError(
    "invalid_session_id",
    `${where}: the session id ${shown} is not a session id, so no file name is built from it: ${SESSION_ID_FORMAT}.`,
    { details: { value: shown, ...(typeof id === "string" ? { length: id.length } : {}) } },
  );
}

/**
 * `name` resolved in `dir`, refused (`log_path_outside_dir`) unless the result is a direct child of
 * `dir`: a name with a separator, `..` or an absolute path never leaves its directory.
 */
export function containedPath(dir: string, name: string): string {
  const root = resolve(dir);
  const path = resolve(root, name);
  if (path === root || dirname(path) !== root || name.includes("\0")) {
    throw new SessionLogError(
      "log_path_outside_dir",
      `The file name ${previewString(name)} does not stay in ${root} (it resolves to ${previewString(path, 200)}); refusing to touch it.`,
      { details: { dir: root, name: previewString(name), resolved: previewString(path, 200) } },
    );
  }
  return path;
}

/** The path of session `id`'s log, `<dir>/<id>.jsonl`, after both checks above. */
export function sessionLogPath(dir: string, id: unknown, where: string): string {
  checkSessionId(id, where);
  return containedPath(dir, `${id}.jsonl`);
}
