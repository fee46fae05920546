import { useEffect, useState } from "react";

/** Screens by hash (`#/runs/<id>/graph`), so the server serves one page and reloads keep the place. */
export type Route =
  | { screen: "runs" }
  | { screen: "run"; runId: string }
  | { screen: "graph"; runId: string }
  | { screen: "usage"; runId?: string }
  | { screen: "inbox" }
  | { screen: "effects" };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "runs" && parts[1] && parts[2] === "graph") return { screen: "graph", runId: parts[1] };
  if (parts[0] === "runs" && parts[1]) return { screen: "run", runId: parts[1] };
  if (parts[0] === "usage") return parts[1] ? { screen: "usage", runId: parts[1] } : { screen: "usage" };
  if (parts[0] === "inbox") return { screen: "inbox" };
  if (parts[0] === "effects") return { screen: "effects" };
  return { screen: "runs" };
}

export function href(route: Route): string {
  switch (route.screen) {
    case "run":
      return `#/runs/${encodeURIComponent(route.runId)}`;
    case "graph":
      return `#/runs/${encodeURIComponent(route.runId)}/graph`;
    case "usage":
      return route.runId ? `#/usage/${encodeURIComponent(route.runId)}` : "#/usage";
    default:
      return `#/${route.screen}`;
  }
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const on = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);
  return route;
}
