import type { Run, StreamEvent } from "@openrath/client";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { useClient } from "./api.js";
import { TERMINAL } from "./format.js";

/** Follows the event streams of the given runs (over SSE) and calls `onEvent` for each event. */
export function useRunStreams(
  runIds: readonly string[],
  onEvent: (runId: string, event: StreamEvent) => void,
) {
  const client = useClient();
  const handler = useRef(onEvent);
  handler.current = onEvent;
  const key = [...runIds].sort().join(",");
  useEffect(() => {
    const controllers = key
      .split(",")
      .filter(Boolean)
      .map((runId) => {
        const controller = new AbortController();
        (async () => {
          try {
            const run = await client.runs.get(runId, { signal: controller.signal });
            for await (const event of client.events.stream(runId, {
              after: run.lastEventSequence,
              parked: false,
              signal: controller.signal,
            }))
              handler.current(runId, event);
          } catch {
            // Aborted, or the stream gave up: the list's own refresh still runs.
          }
        })();
        return controller;
      });
    return () => {
      for (const c of controllers) c.abort();
    };
  }, [client, key]);
}

/** The workflows' revisions by plan hash, for a run's "revision" (the deployed version). */
export function useRevisions() {
  const client = useClient();
  return useQuery({
    queryKey: ["assistants"],
    queryFn: async () => {
      const { items } = await client.assistants.list();
      const byHash = new Map<string, string>();
      for (const a of items) for (const r of a.revisions ?? []) byHash.set(r.hash, `v${r.version}`);
      return { assistants: items, byHash };
    },
    staleTime: 30_000,
  });
}

/** Tokens a run used: its newest session's chunk usage plus the usage compressions carried. */
export function useRunTokens(run: Run) {
  const client = useClient();
  return useQuery({
    queryKey: ["run-tokens", run.id, run.lastCheckpoint],
    enabled: run.lastCheckpoint > 0,
    staleTime: TERMINAL.has(run.status) ? Number.POSITIVE_INFINITY : 2000,
    queryFn: async () => {
      const session = await client.runs.session(run.id);
      let total = 0;
      for (const chunk of session.chunks as {
        usage?: { totalTokens: number };
        carriedUsage?: { usage: { totalTokens: number } }[];
      }[]) {
        total += chunk.usage?.totalTokens ?? 0;
        for (const carried of chunk.carriedUsage ?? []) total += carried.usage.totalTokens;
      }
      return total;
    },
  });
}

/** Invalidates the run queries whenever a followed run changes. */
export function useLiveRuns(runs: readonly Run[] | undefined) {
  const queryClient = useQueryClient();
  const live = (runs ?? []).filter((r) => !TERMINAL.has(r.status)).slice(0, 20);
  useRunStreams(
    live.map((r) => r.id),
    (_id, event) => {
      if (!event.live) void queryClient.invalidateQueries({ queryKey: ["runs"] });
    },
  );
}

/** A clock that ticks every `ms`, for ages and running durations. */
export function useNow(ms = 1000) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}
