import { type BranchEvent, setBranchListener } from "@openrath/core";
import { SpanKind } from "@opentelemetry/api";
import { OPENRATH } from "./attributes.js";
import { currentScope } from "./scope.js";

/**
 * Records a fork or merge made inside traced work as an instant span (`session.fork`,
 * `session.merge`) under that work, naming the new lineage node and its parents. Outside traced
 * work it records nothing.
 */
function recordBranch(event: BranchEvent): void {
  const scope = currentScope();
  if (!scope) return;
  const now = Date.now();
  const span = scope.tracer.startSpan(
    `session.${event.op}`,
    {
      kind: SpanKind.INTERNAL,
      startTime: now,
      attributes: {
        ...scope.base,
        [OPENRATH.sessionId]: event.session.id,
        [OPENRATH.lineageNodeId]: event.session.lineage.id,
        [OPENRATH.lineageParentIds]: event.from.map((s) => s.lineage.id),
      },
    },
    scope.context,
  );
  span.end(now);
}

/**
 * Installs the process-wide fork and merge listener of core (idempotent). Every telemetry
 * instance shares it: a branch span is made with the tracer of the work it happens in.
 */
export function installBranchSpans(): void {
  if (installed) return;
  installed = true;
  const before = setBranchListener(recordBranch);
  // Another listener was there: keep it told too.
  if (before) {
    setBranchListener((event) => {
      recordBranch(event);
      before(event);
    });
  }
}

let installed = false;
