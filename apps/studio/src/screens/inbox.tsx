import type { Interrupt } from "@openrath/client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { describeError, useClient } from "../api.js";
import { age, shortId } from "../format.js";
import { useLiveRuns } from "../hooks.js";
import { href } from "../router.js";
import { SchemaForm } from "../schema-form.js";

type Kind = "approve" | "reject" | "edit" | "respond";

function InterruptCard({
  interrupt,
  onDecided,
}: {
  interrupt: Interrupt;
  onDecided: (text: string) => void;
}) {
  const client = useClient();
  const queryClient = useQueryClient();
  const [reason, setReason] = useState("");
  const [payload, setPayload] = useState<{ value: unknown; valid: boolean }>({
    value: undefined,
    valid: false,
  });
  const [mode, setMode] = useState<"edit" | "respond" | null>(null);
  const decide = useMutation({
    mutationFn: (kind: Kind) =>
      client.interrupts.decide(interrupt.id, {
        kind,
        ...(reason ? { reason } : {}),
        ...(kind === "edit" || kind === "respond" ? { payload: payload.value } : {}),
      }),
    onSuccess: (_result, kind) => {
      onDecided(`Decided (${kind}) the ${interrupt.kind} of run ${shortId(interrupt.runId)}: it resumes.`);
      void queryClient.invalidateQueries({ queryKey: ["interrupts"] });
      void queryClient.invalidateQueries({ queryKey: ["runs"] });
    },
  });
  const schema = (interrupt.schema ?? null) as Record<string, unknown> | null;
  const isInput = interrupt.kind !== "approval";
  return (
    <article className="card" data-interrupt-id={interrupt.id} aria-labelledby={`int-${interrupt.id}`}>
      <header>
        <h2 id={`int-${interrupt.id}`}>
          {interrupt.kind} · step <code>{interrupt.stepId}</code>
        </h2>
        <span className="muted">
          run <a href={href({ screen: "run", runId: interrupt.runId })}>{shortId(interrupt.runId)}</a> ·{" "}
          {age(interrupt.createdAt)}
          {interrupt.expiresAt ? ` · expires ${interrupt.expiresAt}` : ""}
        </span>
      </header>
      <h3>Request</h3>
      <pre className="request">{JSON.stringify(interrupt.request, null, 2)}</pre>
      {mode || isInput ? (
        <SchemaForm
          schema={schema}
          idPrefix={interrupt.id}
          initial={mode === "edit" ? (interrupt.request as Record<string, unknown>) : undefined}
          onChange={(value, valid) => setPayload({ value, valid })}
        />
      ) : null}
      <label className="reason">
        Reason
        <input
          value={reason}
          onChange={(e) => setReason(e.target.value)}
          placeholder="optional, kept in the audit log"
        />
      </label>
      <div className="actions">
        {!isInput ? (
          <>
            <button type="button" onClick={() => decide.mutate("approve")} disabled={decide.isPending}>
              Approve
            </button>
            {mode === "edit" ? (
              <button
                type="button"
                onClick={() => decide.mutate("edit")}
                disabled={decide.isPending || !payload.valid}
              >
                Send edit
              </button>
            ) : (
              <button type="button" className="ghost" onClick={() => setMode("edit")}>
                Edit…
              </button>
            )}
          </>
        ) : (
          <button
            type="button"
            onClick={() => decide.mutate("respond")}
            disabled={decide.isPending || !payload.valid}
          >
            Respond
          </button>
        )}
        <button
          type="button"
          className="danger"
          onClick={() => decide.mutate("reject")}
          disabled={decide.isPending}
        >
          Reject
        </button>
      </div>
      {decide.error ? (
        <p className="error" role="alert">
          {describeError(decide.error)}
        </p>
      ) : null}
    </article>
  );
}

/** The interrupt inbox: pending approvals and inputs across runs, each with its decision form. */
export function InboxScreen() {
  const client = useClient();
  const interrupts = useQuery({
    queryKey: ["interrupts", "pending"],
    queryFn: () => client.interrupts.list({ status: "pending", limit: 100 }),
    refetchInterval: 4000,
  });
  const runs = useQuery({
    queryKey: ["runs", "waiting"],
    queryFn: () => client.runs.list({ status: "waiting", limit: 100 }),
  });
  useLiveRuns(runs.data?.items);
  const items = interrupts.data?.items ?? [];
  const [done, setDone] = useState("");
  return (
    <section aria-labelledby="inbox-title">
      <div className="screen-head">
        <h1 id="inbox-title">Interrupts</h1>
        <span className="muted">{items.length} pending</span>
        <p role="status" className="done">
          {done}
        </p>
      </div>
      {interrupts.error ? (
        <p className="error" role="alert">
          {describeError(interrupts.error)}
        </p>
      ) : null}
      {interrupts.isSuccess && items.length === 0 ? (
        <p className="muted">Nothing waits for a decision.</p>
      ) : null}
      <div className="cards">
        {items.map((i) => (
          <InterruptCard key={i.id} interrupt={i} onDecided={setDone} />
        ))}
      </div>
    </section>
  );
}
