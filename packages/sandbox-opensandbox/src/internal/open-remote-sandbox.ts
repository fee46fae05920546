import { SandboxError } from "@openrath/core";
import { explain, failureDetails, remoteFailure, toSandboxError } from "./errors.js";
import { deleteSandbox, OpenSandboxInstance } from "./open-sandbox-instance.js";
import { type ConnectionConfig, loadSdk, type Sandboxes } from "./sdk.js";
import { sleep } from "./sleep.js";
import type { ResolvedOpenSandboxSpec } from "./spec.js";

/** execd's port inside every sandbox. */
const EXECD_PORT = 44772;

/** Connection settings, resolved from the factory's options and the environment. */
export interface ConnectionSettings {
  readonly domain: string | undefined;
  readonly apiKey: string | undefined;
  readonly protocol: "http" | "https" | undefined;
  readonly useServerProxy: boolean;
  readonly readyTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly execdAccessToken: string | undefined;
  readonly languages: readonly string[];
}

function aborted(signal: AbortSignal, id?: string): SandboxError {
  return new SandboxError(
    "aborted",
    id
      ? `Opening OpenSandbox sandbox ${id} was aborted; the sandbox was deleted.`
      : "Opening an OpenSandbox sandbox was aborted before it was created.",
    { cause: signal.reason, details: id ? { id } : {} },
  );
}

/** `<scheme>://<endpoint>` without a trailing slash; the endpoint may carry a path prefix (or a scheme). */
export function endpointUrl(protocol: string, endpoint: string): string {
  const base = /^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint) ? endpoint : `${protocol}://${endpoint}`;
  return base.replace(/\/+$/, "");
}

/**
 * One `GET /ping`. Called directly rather than through the SDK's `health.ping()`, which reports a
 * non-2xx answer with an empty body (a 503 from a proxy in front of a starting execd) as healthy.
 */
async function ping(
  config: ConnectionConfig,
  execdUrl: string,
  headers: Record<string, string>,
): Promise<void> {
  const response = await config.fetch(`${execdUrl}/ping`, { headers });
  const body = await response.text().catch(() => "");
  if (!response.ok) {
    throw Object.assign(new Error(`HTTP ${response.status}`), {
      statusCode: response.status,
      rawBody: body,
      ...(response.headers.get("x-request-id") ? { requestId: response.headers.get("x-request-id") } : {}),
    });
  }
}

/** Polls the lifecycle state until `Running`; a `Failed` (or terminated) sandbox stops the wait with its reason. */
async function waitRunning(
  sandboxes: Sandboxes,
  id: string,
  initial: { state?: string; reason?: string; message?: string },
  deadline: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  let status = initial;
  let delay = 100;
  while (status.state !== "Running") {
    if (status.state === "Failed" || status.state === "Terminated" || status.state === "Stopping") {
      throw new SandboxError(
        "sandbox_open_failed",
        `OpenSandbox sandbox ${id} did not start: it is ${status.state}${status.reason ? ` (${status.reason})` : ""}${status.message ? `: ${status.message}` : ""}. Check the image, entrypoint and resource limits in the spec.`,
        { details: { id, state: status.state, reason: status.reason, message: status.message } },
      );
    }
    if (Date.now() > deadline) {
      throw new SandboxError(
        "sandbox_open_failed",
        `OpenSandbox sandbox ${id} was still ${status.state ?? "not running"} when the ready timeout ran out. Raise the factory option readyTimeoutMs for slow image pulls.`,
        { details: { id, state: status.state, reason: status.reason } },
      );
    }
    await sleep(delay, signal);
    delay = Math.min(delay * 2, 1000);
    status = (await sandboxes.getSandbox(id)).status ?? {};
  }
}

/**
 * Creates a sandbox and waits until it can run commands: state `Running`, execd answering
 * `/ping`, the workspace created. Any failure after the create deletes the sandbox again.
 */
export async function openRemoteSandbox(
  spec: ResolvedOpenSandboxSpec,
  settings: ConnectionSettings,
  signal: AbortSignal | undefined,
): Promise<OpenSandboxInstance> {
  if (signal?.aborted) throw aborted(signal);
  const sdk = await loadSdk();
  const config = new sdk.ConnectionConfig({
    ...(settings.domain !== undefined ? { domain: settings.domain } : {}),
    ...(settings.apiKey !== undefined ? { apiKey: settings.apiKey } : {}),
    ...(settings.protocol !== undefined ? { protocol: settings.protocol } : {}),
    requestTimeoutSeconds: settings.requestTimeoutMs / 1000,
    useServerProxy: settings.useServerProxy,
    // The SDK otherwise reports each create (image, duration) to the server's metrics endpoint.
    disableMetrics: true,
  }).withTransportIfMissing();
  const factory = sdk.createDefaultAdapterFactory();
  const { sandboxes } = factory.createLifecycleStack({
    connectionConfig: config,
    lifecycleBaseUrl: config.getBaseUrl(),
  });

  let id: string;
  let initial: { state?: string; reason?: string; message?: string };
  try {
    // The SDK's create takes no AbortSignal. Aborting mid-request could leave a sandbox nobody
    // knows the id of, so the request runs to its end (bounded by requestTimeoutMs) and the
    // sandbox is deleted right after when the signal fired meanwhile.
    const created = await sandboxes.createSandbox({
      image: { uri: spec.image },
      entrypoint: [...spec.entrypoint],
      resourceLimits: { ...spec.resourceLimits },
      timeout: spec.timeoutSeconds,
      env: { ...spec.env },
      metadata: { ...spec.metadata },
    });
    id = created.id;
    initial = (created.status as typeof initial | undefined) ?? {};
  } catch (error) {
    await config.closeTransport();
    throw toSandboxError(
      error,
      `Creating an OpenSandbox sandbox from ${spec.image} at ${config.getBaseUrl()}`,
      "sandbox_open_failed",
      {
        image: spec.image,
      },
    );
  }

  try {
    if (signal?.aborted) throw aborted(signal, id);
    const deadline = Date.now() + settings.readyTimeoutMs;
    await waitRunning(sandboxes, id, initial, deadline, signal);
    const endpoint = await sandboxes.getSandboxEndpoint(id, EXECD_PORT, settings.useServerProxy);
    const execdUrl = endpointUrl(config.protocol, endpoint.endpoint);
    const endpointHeaders: Record<string, string> = {
      ...(endpoint.headers ?? {}),
      ...(settings.execdAccessToken !== undefined
        ? { "X-EXECD-ACCESS-TOKEN": settings.execdAccessToken }
        : {}),
    };
    const execd = factory.createExecdStack({
      connectionConfig: config,
      execdBaseUrl: execdUrl,
      endpointHeaders,
    });
    const execdHeaders = { ...config.headers, ...endpointHeaders };
    let attempt = 0;
    let lastPing: unknown;
    for (;;) {
      try {
        await ping(config, execdUrl, execdHeaders);
        break;
      } catch (error) {
        lastPing = error;
        const status = remoteFailure(error).status;
        // Credentials do not get better by waiting.
        if (status === 401 || status === 403) {
          throw toSandboxError(
            error,
            `Reaching execd of OpenSandbox sandbox ${id} at ${execdUrl}`,
            "sandbox_open_failed",
            {
              id,
              execdUrl,
            },
          );
        }
      }
      attempt++;
      if (Date.now() > deadline) {
        const failure = remoteFailure(lastPing);
        throw new SandboxError(
          "sandbox_open_failed",
          `OpenSandbox sandbox ${id} is Running but its execd at ${execdUrl} did not answer /ping within readyTimeoutMs (${settings.readyTimeoutMs} ms); last answer: ${explain(failure)}. If this client cannot reach sandboxes directly (Docker bridge networking, a remote cluster), set the factory option useServerProxy: true.`,
          { cause: lastPing, details: { id, execdUrl, ...failureDetails(failure) } },
        );
      }
      // execd may never come up because the container died: look at the state now and then.
      if (attempt % 5 === 0)
        await waitRunning(sandboxes, id, (await sandboxes.getSandbox(id)).status ?? {}, deadline, signal);
      await sleep(200, signal);
    }
    const instance = new OpenSandboxInstance({
      id,
      spec,
      config,
      sandboxes,
      execd,
      execdUrl,
      execdHeaders,
      languages: settings.languages,
    });
    await instance.init(signal);
    if (signal?.aborted) throw aborted(signal, id);
    instance.startRenewal();
    return instance;
  } catch (error) {
    await deleteSandbox(sandboxes, id).catch(() => undefined);
    await config.closeTransport();
    if (signal?.aborted) throw aborted(signal, id);
    if (SandboxError.isInstance(error)) {
      if (error.code === "sandbox_open_failed" || error.code === "sandbox_unavailable") throw error;
      throw new SandboxError(
        "sandbox_open_failed",
        `Opening OpenSandbox sandbox ${id} failed: ${error.message}`,
        {
          cause: error,
          details: { id, ...error.details },
        },
      );
    }
    const failure = remoteFailure(error);
    throw toSandboxError(error, `Preparing OpenSandbox sandbox ${id}`, "sandbox_open_failed", {
      id,
      ...(failure.code ? { remoteCode: failure.code } : {}),
    });
  }
}
