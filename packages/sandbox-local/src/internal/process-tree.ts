import { readdirSync, readFileSync } from "node:fs";

/** Environment variable every unisolated command carries, so its descendants can be found again. */
export const EXEC_MARKER = "OPENRATH_EXEC_ID";

interface ProcessInfo {
  readonly pid: number;
  readonly ppid: number;
  readonly pgrp: number;
  readonly session: number;
}

/** Every live (non-zombie) process of the process table, or an empty list where there is no `/proc`. */
function processTable(): ProcessInfo[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const table: ProcessInfo[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // The command name may hold spaces and parentheses: the fields start after the last ")".
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (fields[0] === "Z" || fields[0] === "X") continue;
      table.push({
        pid: Number(entry),
        ppid: Number(fields[1]),
        pgrp: Number(fields[2]),
        session: Number(fields[3]),
      });
    } catch {
      // Exited while we looked.
    }
  }
  return table;
}

function carriesMarker(pid: number, markers: ReadonlySet<string>): boolean {
  if (markers.size === 0) return false;
  try {
    const prefix = `${EXEC_MARKER}=`;
    for (const variable of readFileSync(`/proc/${pid}/environ`, "latin1").split("\0")) {
      if (variable.startsWith(prefix) && markers.has(variable.slice(prefix.length))) return true;
    }
  } catch {
    // Exited, or not ours to read.
  }
  return false;
}

/**
 * Kills, with SIGKILL, everything host commands left: their process groups and sessions, processes
 * carrying one of their markers in their environment, and every descendant of those (followed
 * through the parent links of the process table), in passes until one finds nothing (a process
 * may fork while a pass runs). Best effort by nature: a descendant that double-forked, called
 * `setsid` and cleared its environment before the kill has no link left to follow. Without
 * `/proc` (not Linux) only the process groups are killed. Where commands have PID namespaces of
 * their own (see `command-namespace.ts`) this is not needed.
 */
export function killProcessTree(groups: readonly number[], markers: ReadonlySet<string> = new Set()): void {
  for (const pgid of groups) {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // The group is empty already.
    }
  }
  const leaders = new Set(groups);
  for (let pass = 0; pass < 6; pass++) {
    const table = processTable();
    if (table.length === 0) return;
    const doomed = new Set<number>();
    for (const p of table) {
      if (p.pid === process.pid) continue;
      if (leaders.has(p.pgrp) || leaders.has(p.session) || carriesMarker(p.pid, markers)) {
        doomed.add(p.pid);
      }
    }
    // Descendants of what was found, however they regrouped.
    let grew = doomed.size > 0;
    while (grew) {
      grew = false;
      for (const p of table) {
        if (!doomed.has(p.pid) && doomed.has(p.ppid) && p.pid !== process.pid) {
          doomed.add(p.pid);
          grew = true;
        }
      }
    }
    if (doomed.size === 0) return;
    for (const pid of doomed) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Gone already.
      }
    }
  }
}
