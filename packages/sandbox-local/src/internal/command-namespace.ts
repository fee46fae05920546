import { spawnSync } from "node:child_process";
import { findExecutable } from "./find-executable.js";
import { SANDBOX_PATH } from "./sandbox-tools.js";

/**
 * How an unisolated command gets a PID namespace of its own (see ADR 0023), as found and proven
 * by {@link commandNamespace}: util-linux `unshare` and its flags, and `sleep` by absolute path
 * (the namespace's holder polls with it, whatever the command's `PATH`).
 */
export interface CommandNamespace {
  readonly unshare: string;
  readonly flags: readonly string[];
  readonly sleep: string;
}

/**
 * The shell `unshare` runs (`--pid` without `--fork`: the shell stays in the host's PID namespace
 * and its children go into the new one), as `sh -c LAUNCH sh SLEEP FILE ARGS...`, with fd 3 a
 * pipe for reports and fd 4 the gate (the host ends it when it has the command's status).
 *
 * - Its first child becomes PID 1 of the namespace: the holder (a shell of its own, so `ps` and
 *   `pgrep` do not show the command's words on it). It never has the command's pipes, waits for
 *   the gate, then stays while any other process lives there (`kill -0 -1` from PID 1 reaches
 *   exactly those), so background jobs outlive their command as they would without a namespace.
 *   When it dies the kernel kills every process of the namespace, and nothing inside can kill it.
 * - It reports the holder's pid (as the host sees it), runs the command in the foreground (an
 *   asynchronous one would get SIGINT ignored and `/dev/null` as stdin) through `exec`, so a name
 *   like `echo` is the program, not a builtin; reports its status (128 + n after signal n); lets
 *   go of the command's pipes; and waits for the holder, so its own end proves the namespace gone.
 *   Its own stderr is `/dev/null` (fd 5 keeps the command's): a shell reports a child killed by a
 *   signal ("Killed"), which is not the command's output.
 */
const LAUNCH = `sleep_bin=$1; shift
exec 5>&2 2>/dev/null
(
  exec </dev/null >/dev/null 3>&- 5>&-
  exec /bin/sh -c 'read -r _ <&4; exec 4<&-; while kill -0 -1 2>/dev/null; do "$0" 1; done' "$sleep_bin"
) &
holder=$!
echo "$holder" >&3
exec 4<&-
( exec "$@" 3>&- 2>&5 5>&- )
echo "$?" >&3
exec 3>&- 5>&- </dev/null >/dev/null
wait`;

/** `unshare`'s arguments that run `file args` in a namespace as {@link LAUNCH} describes. */
export function namespaceArgs(namespace: CommandNamespace, file: string, args: readonly string[]): string[] {
  return [...namespace.flags, "--", "/bin/sh", "-c", LAUNCH, "sh", namespace.sleep, file, ...args];
}

let probed: CommandNamespace | null | undefined;

/**
 * Whether this host lets unisolated commands have a PID namespace each, and how: `unshare --pid`,
 * in a user namespace mapping the current user when not root (an unprivileged user needs one),
 * without one as root (which keeps its powers). Proven once per process by doing just that;
 * `undefined` where it fails (user namespaces refused, util-linux before 2.38, a container
 * without the right), and commands fall back to the best-effort kill.
 */
export function commandNamespace(): CommandNamespace | undefined {
  if (probed === undefined) probed = probe() ?? null;
  return probed ?? undefined;
}

function probe(): CommandNamespace | undefined {
  if (process.platform !== "linux") return undefined;
  const unshare = findExecutable("unshare", SANDBOX_PATH);
  const sleep = findExecutable("sleep", SANDBOX_PATH);
  if (!unshare || !sleep) return undefined;
  const flags = [...(process.geteuid?.() === 0 ? [] : ["--user", "--map-current-user"]), "--pid"];
  // PID 1 holds the namespace; the next child must be PID 2.
  const proof = `"$0" 10 </dev/null >/dev/null 2>&1 & holder=$!
seen=$(exec /bin/sh -c 'echo $$'); kill -9 "$holder"; wait; [ "$seen" = 2 ]`;
  const result = spawnSync(unshare, [...flags, "--", "/bin/sh", "-c", proof, sleep], {
    stdio: "ignore",
    timeout: 10_000,
  });
  return result.status === 0 ? { unshare, flags, sleep } : undefined;
}
