import { useQueryClient } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { ClientProvider, clientFor, storedToken, storeToken } from "./api.js";
import { href, useRoute } from "./router.js";
import { EffectsScreen } from "./screens/effects.js";
import { GraphScreen } from "./screens/graph.js";
import { InboxScreen } from "./screens/inbox.js";
import { RunScreen } from "./screens/run.js";
import { RunsScreen } from "./screens/runs.js";
import { SignIn } from "./screens/sign-in.js";
import { UsageScreen } from "./screens/usage.js";

const NAV = [
  { screen: "runs", label: "Runs" },
  { screen: "inbox", label: "Interrupts" },
  { screen: "effects", label: "Effects" },
  { screen: "usage", label: "Usage" },
] as const;

export function App() {
  const [token, setToken] = useState<string | null>(() => storedToken());
  const queryClient = useQueryClient();
  const client = useMemo(() => (token === null ? null : clientFor(token)), [token]);
  const route = useRoute();
  if (!client)
    return (
      <SignIn
        onSignedIn={(t) => {
          storeToken(t);
          queryClient.clear();
          setToken(t);
        }}
      />
    );
  const active = route.screen === "run" || route.screen === "graph" ? "runs" : route.screen;
  return (
    <ClientProvider client={client}>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <a className="brand" href={href({ screen: "runs" })}>
          OpenRath <span>Studio</span>
        </a>
        <nav aria-label="Main">
          {NAV.map((item) => (
            <a
              key={item.screen}
              href={href({ screen: item.screen })}
              aria-current={active === item.screen ? "page" : undefined}
            >
              {item.label}
            </a>
          ))}
        </nav>
        <button
          type="button"
          className="ghost"
          onClick={() => {
            storeToken(null);
            queryClient.clear();
            setToken(null);
          }}
        >
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {route.screen === "runs" ? <RunsScreen /> : null}
        {route.screen === "run" ? <RunScreen runId={route.runId} /> : null}
        {route.screen === "graph" ? <GraphScreen runId={route.runId} /> : null}
        {route.screen === "usage" ? <UsageScreen runId={route.runId} /> : null}
        {route.screen === "inbox" ? <InboxScreen /> : null}
        {route.screen === "effects" ? <EffectsScreen /> : null}
      </main>
    </ClientProvider>
  );
}
