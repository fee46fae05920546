import { OpenRathError } from "@openrath/core";
import { removeOrphanedSandboxes } from "@openrath/sandbox-docker";
import type { Command, CommandGroup } from "../internal/command.js";

/**
 * `openrath sandboxes prune`: removes the Docker sandbox containers whose owning process on this
 * host is gone (killed before it could close them). Safe while other OpenRath processes run:
 * their containers are left alone.
 */
const pruneCommand: Command = {
  name: "sandboxes prune",
  summary: "Remove Docker sandbox containers left behind by processes that died.",
  description:
    "A process killed by SIGKILL (or a crashed machine) cannot remove its sandbox containers. This finds the containers this host's OpenRath processes created (label dev.openrath.sandbox) whose owner process is gone and removes them; containers of live processes and of other hosts are kept. Run it at start-up, after a crash, or from cron. The daemon is DOCKER_HOST's, else the local socket.",
  args: [],
  options: [],
  examples: ["openrath sandboxes prune"],
  async run(ctx) {
    try {
      const removed = await removeOrphanedSandboxes();
      for (const id of removed) ctx.stdout.write(`removed ${id.slice(0, 12)}\n`);
      ctx.stdout.write(
        `Removed ${removed.length} orphaned sandbox container${removed.length === 1 ? "" : "s"}\n`,
      );
      return 0;
    } catch (error) {
      if (!OpenRathError.isInstance(error)) throw error;
      ctx.stderr.write(`openrath: ${error.message}\n`);
      return 1;
    }
  },
};

/** `openrath sandboxes`: housekeeping of sandbox backends. */
export const sandboxesCommand: CommandGroup = {
  name: "sandboxes",
  summary: "Housekeeping of sandboxes (Docker containers left by dead processes).",
  commands: [pruneCommand],
};
