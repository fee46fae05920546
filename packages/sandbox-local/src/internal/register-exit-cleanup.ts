/** What a sandbox leaves behind if the process exits before it is closed. */
export interface ExitCleanup {
  /** Synchronously kills the process groups it started and removes the directories it owns. */
  cleanupSync(): void;
}

const open = new Set<ExitCleanup>();
let listening = false;

function onExit(): void {
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
 * Runs `entry.cleanupSync()` when the process exits (normally or through `process.exit`), unless
 * the returned function was called first. The `exit` listener is installed on first use, once.
 */
export function registerExitCleanup(entry: ExitCleanup): () => void {
  if (!listening) {
    process.on("exit", onExit);
    listening = true;
  }
  open.add(entry);
  return () => {
    open.delete(entry);
  };
}
