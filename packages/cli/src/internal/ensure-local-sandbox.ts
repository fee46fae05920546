import { defaultRegistry } from "@openrath/core";
import { localSandbox } from "@openrath/sandbox-local";

/**
 * Registers the `local` sandbox backend in the default registry unless something already did.
 * Done on first use rather than on import, so importing the CLI's library entry has no side effects.
 */
export function ensureLocalSandbox(): void {
  const registry = defaultRegistry();
  if (!registry.has("sandbox", "local")) registry.registerSandbox(localSandbox());
}
