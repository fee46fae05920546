import type { Effect } from "@openrath/client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { describeError, useClient } from "../api.js";
import { age, shortId } from "../format.js";
import { href } from "../router.js";

function EffectCard({ effect, onResolved }: { effect: Effect; onResolved: (text: string) => void }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const [reason, setReason] = useState("");
  const [result, setResult] = useState("");
  const resolve = useMutation({
    mutationFn: (kind: "succeeded" | "failed" | "retry") => {
      if (kind === "succeeded") {
        let parsed: unknown = result;
        try {
          parsed = result.trim() === "" ? null : JSON.parse(result);
        } catch {
          // Plain text is the result as written.
        }
        return client.effects.resolve(effect.id, { kind, result: parsed, ...(reason ? { reason } : {}) });
      }
      if (kind === "failed")
        return client.effects.resolve(effect.id, { kind, reason: reason || "failed (Studio)" });
      return client.effects.resolve(effect.id, { kind, ...(reason ? { reason } : {}) });
    },
    onSuccess: (_result, kind) => {
      onResolved(`Resolved ${effect.tool} of run ${shortId(effect.runId)} as ${kind}.`);
      void queryClient.invalidateQueries({ queryKey: ["effects"] });
      void queryClient.invalidateQueries({ queryKey: ["runs"] });
    },
  });
  return (
    <article className="card" data-effect-id={effect.id} aria-labelledby={`eff-${effect.id}`}>
      <header>
        <h2 id={`eff-${effect.id}`}>
          <code>{effect.tool}</code> · {effect.effect}
        </h2>
        <span className="muted">
          run <a href={href({ screen: "run", runId: effect.runId })}>{shortId(effect.runId)}</a> · step{" "}
          <code>{effect.stepId}</code> · {age(effect.updatedAt)}
        </span>
      </header>
      <dl className="facts">
        <dt>call</dt>
        <dd>
          <code>{effect.callId}</code>
        </dd>
        <dt>dispatches</dt>
        <dd>{effect.dispatches}</dd>
        <dt>idempotency key</dt>
        <dd>{effect.idempotencyKey ?? "none"}</dd>
        <dt>known outcome</dt>
        <dd>
          {effect.outcome === null
            ? "unknown: the worker lost its lease mid-call"
            : JSON.stringify(effect.outcome)}
        </dd>
      </dl>
      <h3>Arguments</h3>
      <pre>{JSON.stringify(effect.arguments, null, 2)}</pre>
      <label>
        Result, if it did happen (JSON or text)
        <textarea rows={2} value={result} onChange={(e) => setResult(e.target.value)} />
      </label>
      <label className="reason">
        Reason
        <input value={reason} onChange={(e) => setReason(e.target.value)} placeholder="what you checked" />
      </label>
      <div className="actions">
        <button type="button" onClick={() => resolve.mutate("succeeded")} disabled={resolve.isPending}>
          It happened (succeeded)
        </button>
        <button
          type="button"
          className="danger"
          onClick={() => resolve.mutate("failed")}
          disabled={resolve.isPending}
        >
          It did not happen (failed)
        </button>
        <button
          type="button"
          className="ghost"
          onClick={() => resolve.mutate("retry")}
          disabled={resolve.isPending}
        >
          Retry the call
        </button>
      </div>
      {resolve.error ? (
        <p className="error" role="alert">
          {describeError(resolve.error)}
        </p>
      ) : null}
    </article>
  );
}

/** Effects under review: ambiguous tool calls with their arguments, and the three resolutions. */
export function EffectsScreen() {
  const client = useClient();
  const effects = useQuery({
    queryKey: ["effects", "needs_review"],
    queryFn: () => client.effects.list({ status: "needs_review", limit: 100 }),
    refetchInterval: 4000,
  });
  const items = effects.data?.items ?? [];
  const [done, setDone] = useState("");
  return (
    <section aria-labelledby="effects-title">
      <div className="screen-head">
        <h1 id="effects-title">Effects under review</h1>
        <span className="muted">{items.length} waiting</span>
        <p role="status" className="done">
          {done}
        </p>
      </div>
      {effects.error ? (
        <p className="error" role="alert">
          {describeError(effects.error)}
        </p>
      ) : null}
      {effects.isSuccess && items.length === 0 ? <p className="muted">No effect waits for review.</p> : null}
      <div className="cards">
        {items.map((e) => (
          <EffectCard key={e.id} effect={e} onResolved={setDone} />
        ))}
      </div>
    </section>
  );
}
