import type { Event, StreamEvent } from "@openrath/client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { describeError, useClient } from "../api.js";
import { duration, shortId, TERMINAL, time } from "../format.js";
import { useNow, useRevisions, useRunStreams } from "../hooks.js";
import { href } from "../router.js";
import { StatusBadge } from "./runs.js";

interface Step {
  readonly stepId: string;
  readonly attempt: number;
  readonly start: number;
  readonly end: number | null;
  readonly outcome: string;
}

/** The steps of a run from its events: a claim starts an attempt, a checkpoint ends a step. */
function stepsOf(events: readonly Event[], now: number, nextStep: string | null): Step[] {
  const steps: Step[] = [];
  let start: number | null = null;
  let attempt = 1;
  for (const e of events) {
    const at = Date.parse(e.at);
    const data = (e.data ?? {}) as Record<string, unknown>;
    if (e.type === "run.claimed") {
      start = at;
      attempt = typeof data.attempt === "number" ? data.attempt : attempt;
    } else if (e.type === "run.checkpoint" && typeof data.stepId === "string") {
      steps.push({ stepId: data.stepId, attempt, start: start ?? at, end: at, outcome: "done" });
      start = at;
    } else if (start !== null && /interrupt|state\.changed|lease|failed|retry|parked/.test(e.type)) {
      const step = typeof data.stepId === "string" ? data.stepId : (nextStep ?? "?");
      const to = typeof data.to === "string" ? data.to : e.type;
      if (to !== "succeeded" && to !== "running") {
        steps.push({ stepId: step, attempt, start, end: at, outcome: to });
        start = null;
      }
    }
  }
  if (start !== null && nextStep)
    steps.push({ stepId: nextStep, attempt, start, end: null, outcome: "running" });
  void now;
  return steps;
}

function Timeline({ steps, now }: { steps: Step[]; now: number }) {
  if (steps.length === 0) return <p className="muted">No step has run yet.</p>;
  const t0 = Math.min(...steps.map((s) => s.start));
  const t1 = Math.max(...steps.map((s) => s.end ?? now), t0 + 1);
  return (
    <ol className="timeline" aria-label="Steps">
      {steps.map((s, i) => {
        const end = s.end ?? now;
        const left = ((s.start - t0) / (t1 - t0)) * 100;
        const width = Math.max(0.8, ((end - s.start) / (t1 - t0)) * 100);
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: a step can repeat; the position is its identity.
          <li key={i} data-step={s.stepId}>
            <span className="step-name">
              {s.stepId}
              {s.attempt > 1 ? <span className="attempt"> attempt {s.attempt}</span> : null}
            </span>
            <span className="track">
              <span className={`bar bar-${s.outcome}`} style={{ left: `${left}%`, width: `${width}%` }} />
            </span>
            <span className="step-time">
              {duration(end - s.start)} · {s.outcome}
            </span>
          </li>
        );
      })}
    </ol>
  );
}

function liveText(event: StreamEvent): string | null {
  const data = event.data as Record<string, unknown> | null;
  if (!data || typeof data !== "object") return null;
  for (const key of ["delta", "text", "content", "token"])
    if (typeof data[key] === "string") return data[key] as string;
  return null;
}

/** A run: its facts, steps on a timeline, events streaming live, its final answer, cancel and resume. */
export function RunScreen({ runId }: { runId: string }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const now = useNow(500);
  const revisions = useRevisions();
  const [live, setLive] = useState<{ events: StreamEvent[]; text: string }>({ events: [], text: "" });
  const run = useQuery({ queryKey: ["runs", "one", runId], queryFn: () => client.runs.get(runId) });
  const events = useQuery({
    queryKey: ["runs", "events", runId],
    queryFn: async () => {
      const all: Event[] = [];
      for await (const e of client.events.listAll(runId)) all.push(e);
      return all;
    },
  });
  const finished = run.data ? TERMINAL.has(run.data.status) : false;
  const answer = useQuery({
    queryKey: ["runs", "answer", runId, run.data?.lastCheckpoint],
    enabled: finished && (run.data?.lastCheckpoint ?? 0) > 0,
    queryFn: async () => {
      const session = await client.runs.session(runId);
      const chunks = session.chunks as { kind: string; content?: string | null; author?: string }[];
      return (
        [...chunks].reverse().find((c) => c.kind === "assistant" && typeof c.content === "string") ?? null
      );
    },
  });
  useRunStreams(run.data && !finished ? [runId] : [], (_id, event) => {
    if (event.live) {
      const text = liveText(event);
      setLive((l) => ({ events: [...l.events.slice(-199), event], text: text ? l.text + text : l.text }));
    } else {
      queryClient.setQueryData<Event[]>(["runs", "events", runId], (old) =>
        old && !old.some((e) => e.sequence === event.sequence) ? [...old, event] : old,
      );
      void queryClient.invalidateQueries({ queryKey: ["runs", "one", runId] });
      void queryClient.invalidateQueries({ queryKey: ["interrupts"] });
    }
  });
  const cancel = useMutation({
    mutationFn: () => client.runs.cancel(runId, { reason: "cancelled in Studio" }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ["runs"] }),
  });
  const resume = useMutation({
    mutationFn: () => client.runs.resume(runId, { reason: "resumed in Studio" }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ["runs"] }),
  });
  if (run.error)
    return (
      <p className="error" role="alert">
        {describeError(run.error)}
      </p>
    );
  if (!run.data) return <p className="muted">Loading…</p>;
  const r = run.data;
  const end = finished ? Date.parse(r.updatedAt) : now;
  const steps = stepsOf(events.data ?? [], now, finished ? null : r.nextStep);
  return (
    <section aria-labelledby="run-title" className="run">
      <div className="screen-head">
        <h1 id="run-title">
          Run <code>{shortId(r.id)}</code> <StatusBadge status={r.status} />
        </h1>
        <div className="actions">
          <a className="button" href={href({ screen: "graph", runId })}>
            Session graph
          </a>
          <a className="button ghost" href={href({ screen: "usage", runId })}>
            Usage
          </a>
          {!finished ? (
            <button
              type="button"
              className="danger"
              onClick={() => cancel.mutate()}
              disabled={cancel.isPending}
            >
              Cancel run
            </button>
          ) : null}
          {r.status === "needs_review" ? (
            <button type="button" onClick={() => resume.mutate()} disabled={resume.isPending}>
              Resume run
            </button>
          ) : null}
        </div>
      </div>
      {cancel.error || resume.error ? (
        <p className="error" role="alert">
          {describeError(cancel.error ?? resume.error)}
        </p>
      ) : null}
      <dl className="facts inline">
        <dt>workflow</dt>
        <dd>{r.workflow}</dd>
        <dt>revision</dt>
        <dd>
          <code title={r.planHash}>{revisions.data?.byHash.get(r.planHash) ?? r.planHash.slice(0, 12)}</code>
        </dd>
        <dt>session</dt>
        <dd>
          <code>{r.sessionId}</code>
        </dd>
        <dt>created</dt>
        <dd>{time(r.createdAt)}</dd>
        <dt>duration</dt>
        <dd>{duration(end - Date.parse(r.createdAt))}</dd>
        <dt>attempt</dt>
        <dd>{r.attempt}</dd>
      </dl>
      {r.error ? (
        <p className="error">
          {r.error.message} [{r.error.code}]
        </p>
      ) : null}
      {r.status === "waiting" ? (
        <p className="notice">
          Waiting for a decision: see the <a href={href({ screen: "inbox" })}>interrupt inbox</a>.
        </p>
      ) : null}
      {r.status === "needs_review" ? (
        <p className="notice">
          Parked for review: see <a href={href({ screen: "effects" })}>effects under review</a>.
        </p>
      ) : null}
      <div className="run-grid">
        <section aria-labelledby="steps-title">
          <h2 id="steps-title">Steps</h2>
          <Timeline steps={steps} now={now} />
          <h2>Final answer</h2>
          {answer.data ? (
            <blockquote className="answer" aria-label="Final answer">
              {answer.data.content}
            </blockquote>
          ) : (
            <p className="muted">{finished ? "No assistant answer." : "Not finished yet."}</p>
          )}
          {live.text ? (
            <>
              <h2>Live output</h2>
              <pre className="live-text" aria-live="polite">
                {live.text}
              </pre>
            </>
          ) : null}
        </section>
        <section aria-labelledby="events-title">
          <h2 id="events-title">
            Events{" "}
            {!finished ? (
              <span className="live-dot" title="streaming live">
                live
              </span>
            ) : null}
          </h2>
          <ol className="events" aria-label="Events">
            {(events.data ?? []).map((e) => (
              <li key={e.sequence} data-type={e.type}>
                <span className="seq">#{e.sequence}</span> <span className="etype">{e.type}</span>{" "}
                <span className="when">{time(e.at).slice(11)}</span>
                <code className="edata">{JSON.stringify(e.data)}</code>
              </li>
            ))}
            {live.events.slice(-20).map((e, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: live events have no sequence.
              <li key={`live-${i}`} className="live" data-type={e.type}>
                <span className="seq">live</span> <span className="etype">{e.type}</span>
                <code className="edata">{JSON.stringify(e.data)}</code>
              </li>
            ))}
          </ol>
        </section>
      </div>
    </section>
  );
}
