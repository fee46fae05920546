import { type ChildProcess, spawn } from "node:child_process";
import { onExit } from "signal-exit";

/** What a sandbox leaves behind if the process ends before it is closed. */
export interface ExitCleanup {
  /** Synchronously kills the processes it started and removes the directories it owns. */
  cleanupSync(): void;
}

/** What the watchdog is told to clean up if this process dies without a word (SIGKILL). */
export interface WatchedResources {
  /** Adds a process group to kill. */
  group(pgid: number): void;
  /** Forgets a process group (it is empty, or was killed). */
  forgetGroup(pgid: number): void;
  /** Adds a directory to remove. */
  dir(path: string): void;
  /** Forgets a directory (it was removed). */
  forgetDir(path: string): void;
}

const open = new Set<ExitCleanup>();
let hooked = false;

function cleanAll(): void {
  for (const entry of open) {
    try {
      entry.cleanupSync();
    } catch {
      // Best effort on the way out: one failure must not leave the others behind.
    }
  }
  open.clear();
}

/**
 * Runs `entry.cleanupSync()` when the process exits — normally, through `process.exit`, or by
 * SIGINT, SIGTERM, SIGHUP and the other signals `signal-exit` covers (it re-raises the signal
 * afterwards, so the process still ends the way it was asked to) — unless the returned function
 * was called first. The hook is installed on first use, so importing the package changes nothing.
 */
export function registerExitCleanup(entry: ExitCleanup): () => void {
  if (!hooked) {
    hooked = true;
    onExit(() => {
      cleanAll();
    });
  }
  open.add(entry);
  return () => {
    open.delete(entry);
  };
}

/**
 * A detached `/bin/sh` that reads what to clean up on its standard input and does it when the
 * input ends without `x`: that is, when this process died, however it died (the kernel closes the
 * pipe even after SIGKILL, when no handler can run). It kills the process groups it was given
 * (unisolated commands) and removes the directories (private and temporary ones). It leads its
 * own process group, so a Ctrl-C to the terminal does not end it first.
 */
const WATCHDOG = `
set -f
trap '' INT HUP
groups=" "
dirs=""
nl='
'
while IFS= read -r line; do
  arg=\${line#? }
  case "$line" in
    "g "*) groups="$groups$arg " ;;
    "u "*) n=" "; for e in $groups; do [ "$e" = "$arg" ] || n="$n$e "; done; groups=$n ;;
    "d "*) dirs="$dirs$arg$nl" ;;
    "r "*) n=""; old=$IFS; IFS=$nl; for e in $dirs; do [ "$e" = "$arg" ] || n="$n$e$nl"; done; IFS=$old; dirs=$n ;;
    x) exit 0 ;;
  esac
done
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done
IFS=$nl
for d in $dirs; do [ -n "$d" ] && rm -rf -- "$d"; done
exit 0
`;

let watchdog: ChildProcess | undefined;

function tell(line: string): void {
  if (line.includes("\n")) return;
  if (!watchdog || watchdog.exitCode !== null || !watchdog.stdin?.writable) {
    try {
      watchdog = spawn("/bin/sh", ["-c", WATCHDOG], { detached: true, stdio: ["pipe", "ignore", "ignore"] });
    } catch {
      return;
    }
    watchdog.on("error", () => {
      watchdog = undefined;
    });
    watchdog.stdin!.on("error", () => {});
    // Neither the watchdog nor its pipe keeps this process alive.
    watchdog.unref();
    (watchdog.stdin as unknown as { unref?: () => void }).unref?.();
  }
  watchdog.stdin!.write(`${line}\n`);
}

/** The process-wide watchdog (started on first use); see {@link WATCHDOG}. */
export const watched: WatchedResources = {
  group: (pgid) => tell(`g ${pgid}`),
  forgetGroup: (pgid) => tell(`u ${pgid}`),
  dir: (path) => tell(`d ${path}`),
  forgetDir: (path) => tell(`r ${path}`),
};
