import { readdirSync, readFileSync } from "node:fs";
import type { SandboxV1 } from "@openrath/core";

/**
 * A marker for planted processes: unique, and put in their command line (as `$0` of a shell), so
 * it survives `env -i` and `setsid`.
 */
export function processMarker(label: string): string {
  return `openrath-conformance-${label}-${process.pid}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * A command that plants a hostile grandchild, then sleeps: the grandchild is double-forked (its
 * parent exits at once), starts a new session, clears its environment, ignores SIGTERM, SIGHUP
 * and SIGINT, and carries `marker` in its command line. It ends by itself after about 15 s, so a
 * backend that loses it does not leak it for long.
 */
export function hostileCommand(marker: string): string {
  const loop = `trap "" TERM HUP INT; i=0; while [ $i -lt 150 ]; do sleep 0.1; i=$((i+1)); done`;
  return `(setsid env -i /bin/sh -c '${loop}' ${marker} &); sh -c 'sleep 30' ${marker}-child & sleep 30`;
}

/** Lists (inside the sandbox) the pids of live processes whose command line contains `$OPENRATH_SCAN`. */
const SCAN = `for d in /proc/[0-9]*; do
  c=$(tr '\\000' ' ' < "$d/cmdline" 2>/dev/null) || continue
  case "$c" in *"$OPENRATH_SCAN"*) echo "\${d#/proc/} $c" ;; esac
done`;

/**
 * Processes whose command line contains `marker`, looked up inside the sandbox (its own process
 * table, which is all a remote backend lets anyone see) and, where this machine has `/proc`, in
 * the host's process table too (local backends, a local Docker daemon). The scan passes the
 * marker through the environment, so it never matches itself.
 */
export async function findMarked(sandbox: SandboxV1 | undefined, marker: string): Promise<string[]> {
  const found: string[] = [];
  if (sandbox) {
    const result = await sandbox.exec(SCAN, { env: { OPENRATH_SCAN: marker }, timeoutMs: 20_000 });
    for (const line of result.stdout.split("\n"))
      if (line.trim()) found.push(`in the sandbox: ${line.trim()}`);
  }
  found.push(...hostProcesses(marker).map((line) => `on the host: ${line}`));
  return found;
}

/** `<pid> <command line>` of the host's live processes holding `marker`, or none without `/proc`. */
export function hostProcesses(marker: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const found: string[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ");
      if (!cmdline.includes(marker)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (/^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2))) continue;
      found.push(`${entry} ${cmdline.trim()}`);
    } catch {
      // Exited while we looked.
    }
  }
  return found;
}
