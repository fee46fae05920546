/**
 * What `session.to("docker", spec)` takes: the image and the limits of one sandbox container.
 *
 * @example
 * ```ts
 * session.to("docker", { image: "python:3.12-slim", memoryBytes: 512 * 1024 ** 2, cpus: 1 });
 * ```
 */
export interface DockerSandboxSpec {
  /**
   * Image to run, such as `python:3.12-slim`. Required unless the factory has a `defaultImage`.
   * It must already be on the Docker host: this backend never pulls.
   */
  readonly image?: string;
  /** Environment variables of every command in the container. */
  readonly env?: Readonly<Record<string, string>>;
  /** Absolute path of the workspace inside the container (default `/workspace`); created at open. */
  readonly workspace?: string;
  /** CPU limit in cores, fractions allowed (Docker's `NanoCpus`). Default: 1. */
  readonly cpus?: number;
  /** Memory limit in bytes, swap included (at least 6 MiB, Docker's minimum). Default: 1 GiB. */
  readonly memoryBytes?: number;
  /** Most processes (and threads) alive in the container at once (default 256). */
  readonly pidsLimit?: number;
  /**
   * Network of the container. Only `"none"` (the default) is supported: sandboxes have no network
   * interface but loopback.
   */
  readonly network?: "none";
  /**
   * User commands run as, `name`, `uid` or `uid:gid`. Default: the image's user when it is not
   * root, else `65534:65534` (nobody). Name `"root"` (or `"0"`) to run as root; even then every
   * capability is dropped and `no-new-privileges` is set.
   */
  readonly user?: string;
  /**
   * Default timeout of each `exec` and `runCode` in milliseconds (default: core's
   * `DEFAULT_EXEC_TIMEOUT_MS`, 10 minutes). `null` (or `Infinity`) turns it off.
   */
  readonly timeoutMs?: number | null;
}
