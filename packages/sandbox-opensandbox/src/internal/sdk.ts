import type * as OpenSandboxSdk from "@alibaba-group/opensandbox";

/** The official SDK's module. */
export type Sdk = typeof OpenSandboxSdk;
/** The SDK's lifecycle service. */
export type Sandboxes = OpenSandboxSdk.Sandboxes;
/** The SDK's execd services for one sandbox. */
export type ExecdStack = ReturnType<OpenSandboxSdk.AdapterFactory["createExecdStack"]>;
/** The SDK's connection settings (one per sandbox: it owns an HTTP agent). */
export type ConnectionConfig = OpenSandboxSdk.ConnectionConfig;
/** An event of execd's stream. */
export type StreamEvent = OpenSandboxSdk.ServerStreamEvent;

let loading: Promise<Sdk> | undefined;

/**
 * Loads the SDK on first use. Importing it has side effects (it starts probing the host's network
 * interfaces for its client-IP header), and this package's main entry must have none.
 */
export function loadSdk(): Promise<Sdk> {
  loading ??= import("@alibaba-group/opensandbox");
  return loading;
}
