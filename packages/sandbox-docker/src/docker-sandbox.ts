import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import {
  type OpenOptions,
  type SandboxBackendV1,
  type SandboxCapabilities,
  SandboxError,
  type SandboxV1,
} from "@openrath/core";
import { checkOptions, checkSpec } from "@openrath/core/backend";
import type Dockerode from "dockerode";
import type { DockerSandboxSpec } from "./docker-sandbox-spec.js";
import { packEntries } from "./internal/archive.js";
import { ContainerSandbox } from "./internal/container-sandbox.js";
import {
  type DockerConnection,
  type DockerEndpoint,
  dockerClient,
  endpointOf,
  isConnectionError,
  messageOf,
  statusOf,
  unavailable,
} from "./internal/docker-client.js";
import { trackContainer, untrackContainer } from "./internal/exit-cleanup.js";
import { FrameDemuxer } from "./internal/frame-demuxer.js";
import { LABEL_CREATED, LABEL_OWNER_HOST, LABEL_OWNER_PID, LABEL_SANDBOX } from "./internal/labels.js";
import { LANGUAGES } from "./internal/languages.js";
import { DockerSandboxOptionsSchema, dockerSandboxSpecSchema, type ParsedSpec } from "./internal/schemas.js";
import { KEEP_ALIVE, SETUP } from "./internal/scripts.js";

export type { DockerSandboxSpec } from "./docker-sandbox-spec.js";

/** Options of {@link dockerSandbox}. */
export interface DockerSandboxOptions {
  /**
   * The Docker client: a Dockerode instance, or its options (`{ socketPath }`, `{ host, port }`,
   * TLS files). Default: `DOCKER_HOST`, else the local socket (`/var/run/docker.sock`).
   */
  readonly docker?: DockerConnection;
  /** Image for specs that name none, so `session.to("docker")` works without a spec. */
  readonly defaultImage?: string;
  /** Labels added to every container (keys starting with `dev.openrath.` are reserved). */
  readonly labels?: Readonly<Record<string, string>>;
  /**
   * Languages `runCode` accepts: any of `sh`, `bash`, `python`, `javascript`, `ruby`, `perl`
   * (default `["sh"]`). They are the capability manifest's `languages`, so every image this backend
   * opens must have their interpreters (`sh`, `bash`, `python3`, `node`, `ruby`, `perl`); `open`
   * checks and fails with `sandbox_open_failed` when one is missing.
   */
  readonly languages?: readonly string[];
}

/** How long `open` waits for the daemon to answer a ping before calling it unavailable. */
const PING_TIMEOUT_MS = 10_000;

function abortedError(): SandboxError {
  return new SandboxError("aborted", "Opening the docker sandbox was aborted.");
}

/** Resolves with `promise`, or rejects with `aborted` as soon as `signal` fires. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(abortedError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortedError());
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

async function ping(
  docker: Dockerode,
  endpoint: DockerEndpoint,
  signal: AbortSignal | undefined,
): Promise<void> {
  const timeout = AbortSignal.timeout(PING_TIMEOUT_MS);
  try {
    // Dockerode's typings omit the options argument its ping takes (abortSignal among them).
    await (docker as unknown as { ping(options: object): Promise<unknown> }).ping({
      abortSignal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
  } catch (error) {
    if (signal?.aborted) throw abortedError();
    if (timeout.aborted) {
      throw unavailable(endpoint, new Error(`no answer within ${PING_TIMEOUT_MS / 1000} s`));
    }
    if (isConnectionError(error) || statusOf(error) === undefined) throw unavailable(endpoint, error);
    throw new SandboxError(
      "sandbox_unavailable",
      `The Docker daemon at ${endpoint.label} answered its health check with an error: ${messageOf(error)}.`,
      { cause: error, details: { endpoint: endpoint.label } },
    );
  }
}

function openFailed(image: string, endpoint: DockerEndpoint, error: unknown, step: string): SandboxError {
  if (SandboxError.isInstance(error)) return error as SandboxError;
  if (isConnectionError(error)) return unavailable(endpoint, error);
  const message = messageOf(error);
  if (statusOf(error) === 404 && /no such image|not found|pull access denied/i.test(message)) {
    return new SandboxError(
      "sandbox_open_failed",
      `The image ${JSON.stringify(image)} is not on the Docker host at ${endpoint.label}. This backend never pulls images (it must not reach registries on its own): pull or build it first (\`docker pull ${image}\` or \`docker build -t ${image} .\`), or name an image that is there (\`docker images\`).`,
      { cause: error, details: { image, endpoint: endpoint.label } },
    );
  }
  return new SandboxError(
    "sandbox_open_failed",
    `Docker could not ${step} for image ${JSON.stringify(image)}: ${message}`,
    {
      cause: error,
      details: { image, endpoint: endpoint.label, ...(statusOf(error) ? { status: statusOf(error) } : {}) },
    },
  );
}

/** Runs a helper command during open (before the sandbox object exists) and returns its stdout. */
async function setupExec(
  container: Dockerode.Container,
  argv: string[],
  user: string | undefined,
): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const exec = await container.exec({
    Cmd: argv,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
    ...(user === undefined ? {} : { User: user }),
  });
  const stream = (await exec.start({
    hijack: true,
    stdin: false,
    Detach: false,
    Tty: false,
  })) as NodeJS.ReadableStream;
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const demuxer = new FrameDemuxer((kind, payload) => (kind === 2 ? err : out).push(Buffer.from(payload)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the setup command did not finish within 60 s")), 60_000);
    stream.on("data", (chunk: Buffer) => demuxer.push(chunk));
    stream.on("end", () => {
      clearTimeout(timer);
      resolve();
    });
    stream.on("close", () => {
      clearTimeout(timer);
      resolve();
    });
    stream.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
  let info = await exec.inspect();
  for (let attempt = 0; info.Running && attempt < 200; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    info = await exec.inspect();
  }
  return {
    exitCode: info.ExitCode ?? -1,
    stdout: Buffer.concat(out).toString("utf8"),
    stderr: Buffer.concat(err).toString("utf8"),
  };
}

/**
 * The Docker sandbox backend: each sandbox is a container started from the spec's image with
 * networking off, CPU, memory and process limits, and a workspace directory. Commands run through
 * the Engine exec API, files move through its archive API, and a timeout or abort kills the
 * command's whole process tree. Images are never pulled.
 *
 * @example
 * ```ts
 * import { createRegistry, Session } from "@openrath/core";
 * import { dockerSandbox } from "@openrath/sandbox-docker";
 *
 * const registry = createRegistry({ sandboxes: [dockerSandbox({ languages: ["sh", "python"] })] });
 * const session = Session.fromUserMessage("hi").to("docker", { image: "python:3.12-slim" }, { registry });
 * const sandbox = await session.sandbox();
 * console.log((await sandbox.runCode("print(6 * 7)", "python")).stdout); // 42
 * await session.release();
 * ```
 *
 * @throws {OpenRathError} `invalid_argument` for bad options (an unknown language, a reserved label);
 *   the descriptor's `parseSpec` and `open` refuse a bad spec with `SandboxError` `invalid_spec`.
 */
export function dockerSandbox(
  options: DockerSandboxOptions = {},
): SandboxBackendV1<DockerSandboxSpec | undefined, SandboxV1> {
  const { languages, labels } = checkOptions(DockerSandboxOptionsSchema, options, {
    backend: "dockerSandbox",
  });
  const specSchema = dockerSandboxSpecSchema(options.defaultImage);
  // `undefined` (and `null`, from JSON) is the empty spec.
  const parseSpec = (spec: unknown): ParsedSpec =>
    checkSpec(specSchema, spec ?? {}, { kind: "sandbox", key: "docker" });
  const capabilities: SandboxCapabilities = {
    streaming: true,
    stdin: true,
    network: "none",
    isolation: "container",
    snapshots: false,
    languages,
    // Every command runs with a group id of its own that no descendant can drop (see KILL_TREE).
    processTree: "contained",
  };
  let client: Dockerode | undefined;

  return {
    kind: "sandbox",
    key: "docker",
    specVersion: "v1",
    capabilities,
    parseSpec,
    async open(rawSpec: DockerSandboxSpec | undefined, openOptions: OpenOptions = {}): Promise<SandboxV1> {
      const spec = parseSpec(rawSpec);
      const signal = openOptions.signal;
      if (signal?.aborted) throw abortedError();
      client ??= dockerClient(options.docker);
      const docker = client;
      const endpoint = await endpointOf(docker);
      await ping(docker, endpoint, signal);
      return openContainer(docker, endpoint, spec, languages, labels, signal);
    },
  };
}

/** The user nobody: what a sandbox runs as when neither the spec nor the image names a non-root one. */
const NOBODY = "65534:65534";

function isRoot(user: string): boolean {
  const name = user.split(":")[0];
  return name === "" || name === "root" || name === "0";
}

/** The spec's user, else the image's when it is not root, else nobody. */
async function userFor(docker: Dockerode, spec: ParsedSpec): Promise<string> {
  if (spec.user !== undefined) return spec.user;
  const configured = (await docker.getImage(spec.image).inspect()).Config?.User ?? "";
  return isRoot(configured) ? NOBODY : configured;
}

interface SetupReport {
  readonly ready: boolean;
  readonly realWorkspace: string;
  readonly uid: number;
  readonly gid: number;
  /** The deepest existing ancestor of the workspace. */
  readonly ancestor: string;
  readonly missing: readonly string[];
}

function parseSetup(stdout: string): SetupReport | undefined {
  const lines = stdout.split("\n");
  if (lines.length < 5) return undefined;
  const [state, realWorkspace, uid, gid, ancestor] = lines as [string, string, string, string, string];
  const report = {
    ready: state === "ok",
    realWorkspace: realWorkspace.replace(/\/+$/, "") || "/",
    uid: Number(uid),
    gid: Number(gid),
    ancestor,
    missing: lines.slice(5).flatMap((line) => (line.startsWith("missing ") ? [line.slice(8)] : [])),
  };
  const sane =
    Number.isSafeInteger(report.uid) &&
    Number.isSafeInteger(report.gid) &&
    report.realWorkspace.startsWith("/") &&
    ancestor.startsWith("/");
  return sane ? report : undefined;
}

/**
 * Creates (or takes over) the workspace through the archive API, which sets owners from the
 * archive's headers: no exec as root and no capability needed. The archive holds the missing
 * directories below the deepest existing ancestor; a workspace that exists but is not writable
 * is included too, so it is given to the sandbox user.
 */
async function makeWorkspace(
  container: Dockerode.Container,
  workspace: string,
  setup: SetupReport,
): Promise<void> {
  const ancestor = setup.ancestor.replace(/\/+$/, "");
  const rest = workspace.slice(ancestor.length).replace(/^\/+/, "");
  const parts = rest.split("/").filter(Boolean);
  const entries = parts.map((_, i) => ({
    name: parts.slice(0, i + 1).join("/"),
    type: "directory" as const,
    uid: setup.uid,
    gid: setup.gid,
  }));
  await container.putArchive(packEntries(entries), { path: ancestor || "/" });
}

async function openContainer(
  docker: Dockerode,
  endpoint: DockerEndpoint,
  spec: ParsedSpec,
  languages: readonly string[],
  labels: Readonly<Record<string, string>>,
  signal: AbortSignal | undefined,
): Promise<SandboxV1> {
  let user: string;
  try {
    user = await abortable(userFor(docker, spec), signal);
  } catch (error) {
    throw openFailed(spec.image, endpoint, error, "inspect the image");
  }
  const creating = docker.createContainer({
    name: `openrath-${randomUUID().slice(0, 13)}`,
    Image: spec.image,
    Entrypoint: ["/bin/sh", "-c"],
    Cmd: [KEEP_ALIVE],
    Env: Object.entries(spec.env).map(([name, value]) => `${name}=${value}`),
    WorkingDir: spec.workspace,
    User: user,
    Tty: false,
    OpenStdin: false,
    NetworkDisabled: true,
    Labels: {
      ...labels,
      [LABEL_SANDBOX]: "1",
      [LABEL_OWNER_PID]: String(process.pid),
      [LABEL_OWNER_HOST]: hostname(),
      [LABEL_CREATED]: new Date().toISOString(),
    },
    HostConfig: {
      NetworkMode: "none",
      AutoRemove: false,
      PidsLimit: spec.pidsLimit,
      NanoCpus: Math.round(spec.cpus * 1e9),
      Memory: spec.memoryBytes,
      MemorySwap: spec.memoryBytes,
      // Root in the container (when asked for) keeps no capability, and no exec gains any.
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges"],
    },
  });
  let container: Dockerode.Container | undefined;
  const cleanup = async () => {
    const created = container ?? (await creating.catch(() => undefined));
    if (!created) return;
    await created.remove({ force: true, v: true }).catch(() => undefined);
    untrackContainer(created.id);
  };
  try {
    try {
      container = await abortable(creating, signal);
    } catch (error) {
      throw openFailed(spec.image, endpoint, error, "create a container");
    }
    trackContainer(container.id, docker, endpoint);
    try {
      await abortable(container.start(), signal);
    } catch (error) {
      throw openFailed(
        spec.image,
        endpoint,
        error,
        "start the container (the image needs /bin/sh and sleep; is it a shell-less image?)",
      );
    }
    const programs = languages.map((language) => LANGUAGES[language]!.program);
    const runSetup = async () => {
      let result: { exitCode: number; stdout: string; stderr: string };
      try {
        result = await abortable(
          setupExec(container!, ["/bin/sh", "-c", SETUP, "sh", spec.workspace, ...programs], user),
          signal,
        );
      } catch (error) {
        throw openFailed(spec.image, endpoint, error, "run the workspace setup in the container");
      }
      const report = result.exitCode === 0 ? parseSetup(result.stdout) : undefined;
      if (!report) {
        throw new SandboxError(
          "sandbox_open_failed",
          `Setting up the workspace in image ${JSON.stringify(spec.image)} failed (exit ${result.exitCode}): ${result.stderr.trim() || result.stdout.trim()}. The image needs /bin/sh with readlink and id.`,
          { details: { image: spec.image } },
        );
      }
      return report;
    };
    let setup = await runSetup();
    if (setup.missing.length > 0) {
      const wanted = languages.filter((language) => setup.missing.includes(LANGUAGES[language]!.program));
      throw new SandboxError(
        "sandbox_open_failed",
        `The image ${JSON.stringify(spec.image)} lacks ${setup.missing.join(", ")}, needed for the declared runCode language(s) ${wanted.join(", ")}. Use an image that has them, or declare fewer with dockerSandbox({ languages }).`,
        { details: { image: spec.image, missing: setup.missing, languages } },
      );
    }
    if (!setup.ready) {
      try {
        await abortable(makeWorkspace(container, spec.workspace, setup), signal);
      } catch (error) {
        throw openFailed(spec.image, endpoint, error, `create the workspace ${spec.workspace}`);
      }
      setup = await runSetup();
      if (!setup.ready) {
        throw new SandboxError(
          "sandbox_open_failed",
          `Cannot create a writable workspace ${spec.workspace} in image ${JSON.stringify(spec.image)} for user ${user}. Pick a "workspace" under a directory that user may write, or another "user".`,
          { details: { image: spec.image, workspace: spec.workspace, user } },
        );
      }
    }
    const { uid, gid, realWorkspace } = setup;
    return new ContainerSandbox({
      endpoint,
      docker,
      container,
      spec,
      realWorkspace,
      uid,
      gid,
      languages,
    });
  } catch (error) {
    await cleanup();
    throw error;
  }
}

declare module "@openrath/core" {
  interface SandboxBackends {
    /** A container through the Docker Engine API; see {@link DockerSandboxSpec}. */
    docker: DockerSandboxSpec | undefined;
  }
}
