import { hostname } from "node:os";
import { SandboxError } from "@openrath/core";
import {
  type DockerConnection,
  dockerClient,
  endpointOf,
  isConnectionError,
  messageOf,
  statusOf,
  unavailable,
} from "./internal/docker-client.js";
import { LABEL_OWNER_HOST, LABEL_OWNER_PID, LABEL_SANDBOX } from "./internal/labels.js";

/** Options of {@link removeOrphanedSandboxes}. */
export interface RemoveOrphanedSandboxesOptions {
  /** The Docker client or its options, as for `dockerSandbox({ docker })`. */
  readonly docker?: DockerConnection;
}

/** Whether a process with `pid` exists on this host (one owned by another user counts). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Removes sandbox containers left behind by processes of this host that are gone (killed before
 * they could close their sandboxes). A container qualifies when it carries the backend's labels,
 * was created on this host, and its owner pid is not a live process. Containers of live processes
 * and of other hosts sharing the daemon are left alone.
 *
 * When to run it: a process that exits normally or by SIGINT, SIGTERM or SIGHUP removes its own
 * containers, but one killed by SIGKILL (the OOM killer, `kill -9`, a crashed machine) cannot.
 * Run this at the start of a long-lived process (a server, a worker, a CI job) and from cron on a
 * shared Docker host; `openrath sandboxes prune` runs it from the command line. It is safe while
 * other OpenRath processes run: their containers are kept.
 *
 * @returns the ids of the removed containers.
 * @throws {SandboxError} `sandbox_unavailable` when the daemon cannot be reached,
 *   `sandbox_remote_error` when it refuses the listing or a removal.
 *
 * @example
 * ```ts
 * const removed = await removeOrphanedSandboxes();
 * if (removed.length > 0) console.log(`removed ${removed.length} orphaned sandbox container(s)`);
 * ```
 */
export async function removeOrphanedSandboxes(
  options: RemoveOrphanedSandboxesOptions = {},
): Promise<string[]> {
  const docker = dockerClient(options.docker);
  const endpoint = await endpointOf(docker);
  const failed = (error: unknown, what: string) =>
    isConnectionError(error)
      ? unavailable(endpoint, error)
      : new SandboxError(
          "sandbox_remote_error",
          `Docker at ${endpoint.label} failed to ${what}: ${messageOf(error)}`,
          {
            cause: error,
            details: { endpoint: endpoint.label },
          },
        );
  let containers: Awaited<ReturnType<typeof docker.listContainers>>;
  try {
    containers = await docker.listContainers({ all: true, filters: { label: [`${LABEL_SANDBOX}=1`] } });
  } catch (error) {
    throw failed(error, "list containers");
  }
  const host = hostname();
  const removed: string[] = [];
  for (const container of containers) {
    const labels = container.Labels ?? {};
    if (labels[LABEL_OWNER_HOST] !== host) continue;
    const pid = Number(labels[LABEL_OWNER_PID]);
    if (!Number.isSafeInteger(pid) || pid <= 0 || alive(pid)) continue;
    try {
      await docker.getContainer(container.Id).remove({ force: true, v: true });
      removed.push(container.Id);
    } catch (error) {
      // Gone already, or being removed by someone else.
      if (statusOf(error) === 404 || statusOf(error) === 409) continue;
      throw failed(error, `remove container ${container.Id.slice(0, 12)}`);
    }
  }
  return removed;
}
