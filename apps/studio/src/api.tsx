import { createClient, OpenRathApiError, type OpenRathClient } from "@openrath/client";
import { createContext, type ReactNode, useContext, useMemo } from "react";

const TOKEN_KEY = "openrath.studio.token";

/** The token the person signed in with, kept for this browser tab only. */
export function storedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function storeToken(token: string | null): void {
  if (token === null) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

/** A client of the server that served this page (Studio lives at `<server>/studio/`). */
export function clientFor(token: string): OpenRathClient {
  return createClient({ baseUrl: window.location.origin, ...(token ? { token } : {}) });
}

const ClientContext = createContext<OpenRathClient | null>(null);

export function ClientProvider({ client, children }: { client: OpenRathClient; children: ReactNode }) {
  return <ClientContext.Provider value={client}>{children}</ClientContext.Provider>;
}

export function useClient(): OpenRathClient {
  const client = useContext(ClientContext);
  if (!client) throw new Error("useClient outside ClientProvider");
  return client;
}

/** One line for a failed call: the server's code and message, or the error's. */
export function describeError(error: unknown): string {
  if (OpenRathApiError.isInstance(error)) {
    if (error.code === "forbidden") return `Not allowed: ${error.message}`;
    return `${error.message} [${error.code}]`;
  }
  return error instanceof Error ? error.message : String(error);
}

export function useStable<T>(make: () => T, deps: unknown[]): T {
  // biome-ignore lint/correctness/useExhaustiveDependencies: the caller names the dependencies.
  return useMemo(make, deps);
}
