import type { Run } from "@openrath/client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { describeError, useClient } from "../api.js";
import { age, duration, shortId, TERMINAL, tokens } from "../format.js";
import { useLiveRuns, useNow, useRevisions, useRunTokens } from "../hooks.js";
import { href } from "../router.js";

const STATUSES = ["queued", "running", "waiting", "needs_review", "succeeded", "failed", "cancelled"];

function TokensCell({ run }: { run: Run }) {
  const used = useRunTokens(run);
  return <td className="num">{used.data === undefined ? "—" : tokens(used.data)}</td>;
}

export function StatusBadge({ status }: { status: string }) {
  return <span className={`status status-${status}`}>{status.replace("_", " ")}</span>;
}

function NewRun() {
  const client = useClient();
  const queryClient = useQueryClient();
  const revisions = useRevisions();
  const [assistant, setAssistant] = useState("");
  const [input, setInput] = useState("");
  const create = useMutation({
    mutationFn: () =>
      client.runs.create({ assistant: assistant || (revisions.data?.assistants[0]?.name ?? ""), input }),
    onSuccess: (run) => {
      void queryClient.invalidateQueries({ queryKey: ["runs"] });
      window.location.hash = href({ screen: "run", runId: run.id });
    },
  });
  return (
    <form
      className="new-run"
      aria-label="Start a run"
      onSubmit={(e) => {
        e.preventDefault();
        create.mutate();
      }}
    >
      <label>
        Workflow
        <select value={assistant} onChange={(e) => setAssistant(e.target.value)} aria-label="Workflow to run">
          {(revisions.data?.assistants ?? []).map((a) => (
            <option key={a.name} value={a.name}>
              {a.name}
            </option>
          ))}
        </select>
      </label>
      <label className="grow">
        Input
        <input
          value={input}
          onChange={(e) => setInput(e.target.value)}
          placeholder="The user's message"
          required
        />
      </label>
      <button type="submit" disabled={create.isPending}>
        Start run
      </button>
      {create.error ? (
        <span className="error" role="alert">
          {describeError(create.error)}
        </span>
      ) : null}
    </form>
  );
}

/** Runs: status, workflow, revision, age, duration, tokens; filters; rows follow their runs live. */
export function RunsScreen() {
  const client = useClient();
  const [status, setStatus] = useState("");
  const [workflow, setWorkflow] = useState("");
  const [search, setSearch] = useState("");
  const now = useNow();
  const revisions = useRevisions();
  const runs = useQuery({
    queryKey: ["runs", status],
    // The server lists newest first: the first page is the newest 100.
    queryFn: () => client.runs.list({ limit: 100, ...(status ? { status } : {}) }),
    refetchInterval: 5000,
  });
  useLiveRuns(runs.data?.items);
  const q = search.trim().toLowerCase();
  const items = [...(runs.data?.items ?? [])]
    .sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt))
    .filter(
      (r) =>
        (!workflow || r.workflow === workflow) &&
        (!q || r.id.includes(q) || r.sessionId.includes(q) || r.workflow.toLowerCase().includes(q)),
    );
  const workflows = [...new Set((runs.data?.items ?? []).map((r) => r.workflow))].sort();
  return (
    <section aria-labelledby="runs-title">
      <div className="screen-head">
        <h1 id="runs-title">Runs</h1>
        <NewRun />
      </div>
      <search className="filters">
        <label>
          Status
          <select value={status} onChange={(e) => setStatus(e.target.value)}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Workflow
          <select value={workflow} onChange={(e) => setWorkflow(e.target.value)}>
            <option value="">any</option>
            {workflows.map((w) => (
              <option key={w} value={w}>
                {w}
              </option>
            ))}
          </select>
        </label>
        <label className="grow">
          Search
          <input
            type="search"
            value={search}
            onChange={(e) => setSearch(e.target.value)}
            placeholder="run id, session id or workflow"
          />
        </label>
      </search>
      {runs.error ? (
        <p className="error" role="alert">
          {describeError(runs.error)}
        </p>
      ) : null}
      <table className="runs">
        <caption className="visually-hidden">Runs of this tenant, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Status</th>
            <th scope="col">Workflow</th>
            <th scope="col">Revision</th>
            <th scope="col">Age</th>
            <th scope="col">Duration</th>
            <th scope="col" className="num">
              Tokens
            </th>
          </tr>
        </thead>
        <tbody>
          {items.map((run) => {
            const end = TERMINAL.has(run.status) ? Date.parse(run.updatedAt) : now;
            return (
              <tr key={run.id} data-run-id={run.id} data-status={run.status}>
                <td>
                  <a
                    href={href({ screen: "run", runId: run.id })}
                    aria-label={`Run ${shortId(run.id)} of ${run.workflow}`}
                  >
                    <code>{shortId(run.id)}</code>
                  </a>
                </td>
                <td>
                  <StatusBadge status={run.status} />
                </td>
                <td>{run.workflow}</td>
                <td>
                  <code title={run.planHash}>
                    {revisions.data?.byHash.get(run.planHash) ?? run.planHash.slice(0, 8)}
                  </code>
                </td>
                <td title={run.createdAt}>{age(run.createdAt, now)}</td>
                <td>{duration(end - Date.parse(run.createdAt))}</td>
                <TokensCell run={run} />
              </tr>
            );
          })}
        </tbody>
      </table>
      {runs.isSuccess && items.length === 0 ? <p className="muted">No runs match.</p> : null}
    </section>
  );
}
