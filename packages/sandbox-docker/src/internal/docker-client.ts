import { SandboxError } from "@openrath/core";
import Dockerode from "dockerode";

/** A Dockerode client, or the options to make one (socket path, host and port, TLS files). */
export type DockerConnection = Dockerode | Dockerode.DockerOptions;

/** Where a client connects, for messages and for the exit-time cleanup. */
export interface DockerEndpoint {
  /** `unix:///var/run/docker.sock` or `http://host:port`. */
  readonly label: string;
  readonly socketPath?: string;
  readonly host?: string;
  readonly port?: number;
  readonly protocol?: string;
}

/** A client from the factory's `docker` option: the instance itself, or a new one from options. */
export function dockerClient(connection: DockerConnection | undefined): Dockerode {
  if (connection !== undefined && typeof (connection as Dockerode).createContainer === "function") {
    return connection as Dockerode;
  }
  return new Dockerode(connection as Dockerode.DockerOptions | undefined);
}

interface ModemLike {
  socketPath?: string | (() => string | Promise<string>);
  host?: string;
  port?: number | string;
  protocol?: string;
}

/** Reads the endpoint off a client's modem (a socket path may be computed lazily). */
export async function endpointOf(docker: Dockerode): Promise<DockerEndpoint> {
  const modem = (docker.modem ?? {}) as ModemLike;
  if (modem.host) {
    const protocol = modem.protocol ?? "http";
    const port = modem.port === undefined || modem.port === "" ? undefined : Number(modem.port);
    return {
      label: `${protocol}://${modem.host}${port === undefined ? "" : `:${port}`}`,
      host: modem.host,
      ...(port === undefined ? {} : { port }),
      protocol,
    };
  }
  let socketPath = "/var/run/docker.sock";
  try {
    const value = typeof modem.socketPath === "function" ? await modem.socketPath() : modem.socketPath;
    if (typeof value === "string" && value) socketPath = value;
  } catch {
    // Fall back to the conventional path for the message.
  }
  return { label: `unix://${socketPath}`, socketPath };
}

const CONNECTION_CODES = new Set([
  "ENOENT",
  "ECONNREFUSED",
  "EACCES",
  "EPERM",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ENOTSOCK",
]);

/** Whether `error` says the daemon could not be reached at all (as opposed to answering with an error). */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" && CONNECTION_CODES.has(code);
}

/** The HTTP status of a Docker Engine error, if it has one. */
export function statusOf(error: unknown): number | undefined {
  const status = (error as { statusCode?: unknown })?.statusCode;
  return typeof status === "number" ? status : undefined;
}

/** The daemon's own message of a Docker Engine error (dockerode wraps it in `(HTTP code …) … - <message>`). */
export function messageOf(error: unknown): string {
  const json = (error as { json?: unknown })?.json;
  if (json && typeof json === "object" && typeof (json as { message?: unknown }).message === "string") {
    return (json as { message: string }).message;
  }
  if (typeof json === "string" && json.trim()) return json.trim();
  return error instanceof Error ? error.message : String(error);
}

/** The `sandbox_unavailable` error for a daemon that does not answer at `endpoint`. */
export function unavailable(endpoint: DockerEndpoint, error: unknown): SandboxError {
  const code = (error as { code?: unknown })?.code;
  const why =
    code === "ENOENT"
      ? "the socket does not exist"
      : code === "ECONNREFUSED"
        ? "the connection was refused"
        : code === "EACCES" || code === "EPERM"
          ? "permission denied (add your user to the docker group, or use a rootless daemon's socket)"
          : error instanceof Error
            ? error.message
            : String(error);
  return new SandboxError(
    "sandbox_unavailable",
    `Cannot reach the Docker daemon at ${endpoint.label}: ${why}. Start Docker (\`sudo systemctl start docker\`, Docker Desktop, or \`dockerd\`), or point the backend at a running daemon with dockerSandbox({ docker: { socketPath } }) or DOCKER_HOST.`,
    {
      cause: error,
      details: { endpoint: endpoint.label, ...(typeof code === "string" ? { errno: code } : {}) },
    },
  );
}
