import type { RunOptions } from "./agent-options.js";
import { type Branch, branchLabel, withScope } from "./call-position.js";
import { OpenRathError } from "./errors.js";
import type { JsonValue } from "./json.js";
import { callModel } from "./model-call.js";
import type { ProviderRequest, ProviderV1, RetryPolicy } from "./provider.js";
import { requestDigest } from "./request-fingerprint.js";
import type { Session } from "./session.js";
import { PassThrough, type Runnable } from "./workflow.js";

/** A rule choosing a candidate: its index, its name, or -1 / `undefined` for none. */
export type SelectorRule = (
  session: Session,
  candidates: readonly Runnable[],
) => number | string | undefined | Promise<number | string | undefined>;

/** Options of {@link Selector}. */
export interface SelectorOptions {
  readonly name?: string;
  /** The router model. Give this or `rule`. */
  readonly provider?: ProviderV1;
  /** Instructions for the router model (a default rubric is used otherwise). */
  readonly instructions?: string;
  /** A plain function instead of a model. */
  readonly rule?: SelectorRule;
  readonly retry?: RetryPolicy;
}

/** The outcome of {@link Selector.route}. */
export interface Route {
  /** The chosen candidate, or a {@link PassThrough} when none fits. */
  readonly target: Runnable;
  /** Index of the chosen candidate, -1 for none. */
  readonly index: number;
  /** The input with the `selector.decision` event appended. */
  readonly session: Session;
}

const RUBRIC =
  "You route a conversation to the one handler best suited to take the next step. Reply with the handler's number only, or -1 if none fits.";

/**
 * Picks the next workflow or agent among candidates by their descriptions, with a router model or
 * a rule. The decision is recorded in the session as a `selector.decision` event chunk (with the
 * router's request fingerprint and reply), so a replay takes the same route without calling the
 * model. No candidates, a -1, or a reply without a usable number route to a {@link PassThrough}.
 *
 * @example
 * ```ts
 * const selector = new Selector({ provider });
 * const { target, session: routed } = await selector.route(session, [coder, writer, researcher]);
 * const next = await target.run(routed);
 * ```
 */
export class Selector {
  readonly name: string;
  private readonly options: SelectorOptions;

  constructor(options: SelectorOptions) {
    if (!options.provider && !options.rule) {
      throw new OpenRathError(
        "invalid_argument",
        "A Selector needs a provider (a router model) or a rule function.",
      );
    }
    this.name = options.name ?? "selector";
    this.options = options;
  }

  /** Chooses a candidate for `session`. */
  async route(session: Session, candidates: readonly Runnable[], options: RunOptions = {}): Promise<Route> {
    const run = withScope(options);
    const branch = run.scope.child(run.scope.branchOf(session.lineage), "select", this.name);
    if (!run.observer) return this.choose(session, candidates, run, branch);
    const work = {
      kind: "select",
      selector: this.name,
      candidates: candidates.map((c) => c.name),
      session,
    } as const;
    return run.observer.observe(work, () => this.choose(session, candidates, run, branch));
  }

  private async choose(
    session: Session,
    candidates: readonly Runnable[],
    run: RunOptions,
    branch: Branch,
  ): Promise<Route> {
    const author = run.path ? `${run.path}/${this.name}` : this.name;
    const names = candidates.map((c) => c.name);
    let index = -1;
    let reason: string;
    let recorded: Record<string, unknown> = {};
    if (candidates.length === 0) {
      reason = "no candidates";
    } else if (this.options.rule) {
      const picked = await this.options.rule(session, candidates);
      index =
        typeof picked === "string"
          ? names.indexOf(picked)
          : typeof picked === "number" && picked >= 0 && picked < candidates.length
            ? picked
            : -1;
      reason = index >= 0 ? "rule" : `rule returned ${JSON.stringify(picked ?? null)}`;
    } else {
      const request: ProviderRequest = {
        messages: [
          { role: "system", content: this.options.instructions ?? RUBRIC },
          ...session.messages(),
          {
            role: "user",
            content: `Handlers:\n${candidates.map((c, i) => `${i}: ${c.name} — ${c.description || "(no description)"}`).join("\n")}\nReply with one number.`,
          },
        ],
        toolChoice: "none",
      };
      const { response, fingerprint } = await callModel({
        kind: "Selector",
        by: this.name,
        author,
        provider: this.options.provider!,
        request,
        position: { branch: branch.key, label: branchLabel(branch), index: 0 },
        streaming: false,
        ...(this.options.retry ? { retry: this.options.retry } : {}),
        run,
        signal: run.signal,
        session,
      });
      const match = /-?\d+/.exec(response.content ?? "");
      const parsed = match ? Number.parseInt(match[0], 10) : Number.NaN;
      index = parsed >= 0 && parsed < candidates.length ? parsed : -1;
      reason = index >= 0 ? "model" : match ? `model replied ${parsed}` : "model reply had no number";
      recorded = {
        requestHash: fingerprint,
        reply: response.content,
        model: response.model,
        branch: branch.key,
        request: requestDigest(request, 1) as unknown as JsonValue,
      };
      if (response.usage) recorded.usage = { ...response.usage };
    }
    const target = index >= 0 ? candidates[index]! : new PassThrough();
    const routed = session.append({
      kind: "event",
      name: "selector.decision",
      author,
      data: {
        selector: this.name,
        candidates: names,
        index,
        chosen: index >= 0 ? names[index]! : null,
        reason,
        ...(recorded as object),
      },
      ...(recorded.usage ? { usage: recorded.usage as never, model: recorded.model as string } : {}),
    });
    run.onEvent?.({ type: "produced", by: this.name, path: author, session: routed });
    return { target, index, session: routed };
  }

  /** Routes, then runs the chosen candidate on the routed session. */
  async run(session: Session, candidates: readonly Runnable[], options: RunOptions = {}): Promise<Session> {
    const { target, session: routed } = await this.route(session, candidates, options);
    return target.run(routed, options);
  }
}
