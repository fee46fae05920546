import { readdirSync, readFileSync } from "node:fs";

/**
 * `<pid> <command line>` of this machine's live processes (zombies left out) whose command line
 * contains `word`, read from `/proc`. Tests find the processes a sandbox started this way, by a
 * word they put in the command line (a `sleep` duration of their own), since pids inside a
 * command's PID namespace are not the host's and an environment can be cleared.
 */
export function processesWith(word: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ").trim();
      if (!cmdline.includes(word)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (/^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2))) continue;
      found.push(`${entry} ${cmdline}`);
    } catch {
      // Exited while we looked.
    }
  }
  return found;
}
