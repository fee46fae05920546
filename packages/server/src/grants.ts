/**
 * Every action a route can need, as a grant names it. A token holds grants; a route names the one
 * action it needs. A grant matches its action exactly, by namespace (`run.*` covers `run.read`,
 * `run.create`, ...), or entirely (`*`). `self.read` (credentials reading their own scope and
 * grants) needs no grant: every authenticated request may take it.
 */
export const ACTIONS = [
  "self.read",
  "assistant.read",
  "assistant.deploy",
  "run.read",
  "run.create",
  "run.cancel",
  "run.resume",
  "session.read",
  "event.read",
  "interrupt.read",
  "interrupt.decide",
  "effect.read",
  "effect.resolve",
  "artifact.read",
  "memory.read",
  "memory.write",
  "token.read",
  "token.create",
  "token.revoke",
  "audit.read",
  "schedule.read",
  "schedule.write",
  "webhook.read",
  "webhook.write",
  "metrics.read",
] as const;

/** An action a route needs (see {@link ACTIONS}). */
export type Action = (typeof ACTIONS)[number];

const NAMESPACES = new Set(ACTIONS.map((action) => action.split(".")[0]));
const KNOWN = new Set<string>(ACTIONS);

/** Whether `grants` allow `action`. */
export function allows(grants: readonly string[], action: Action): boolean {
  if (action === "self.read") return true;
  const namespace = `${action.split(".")[0]}.*`;
  return grants.some((grant) => grant === action || grant === namespace || grant === "*");
}

/**
 * Checks grants a token is to be given: each an action, a namespace wildcard or `*`.
 *
 * @returns the unknown grants (empty when all are valid).
 */
export function unknownGrants(grants: readonly string[]): string[] {
  return grants.filter((grant) => {
    if (grant === "*" || KNOWN.has(grant)) return false;
    const [namespace, rest] = grant.split(".");
    return !(rest === "*" && NAMESPACES.has(namespace ?? ""));
  });
}
