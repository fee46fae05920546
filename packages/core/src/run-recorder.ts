import type { RunEvent } from "./agent-options.js";
import type { Chunk } from "./chunk.js";
import type { Session } from "./session.js";

/**
 * Keeps every session a run produces, for replay, logs and lineage views: pass `recorder.onEvent`
 * as the run's `onEvent`. A session seen in several versions is kept in its longest version.
 *
 * @example
 * ```ts
 * const recorder = new RunRecorder();
 * const out = await flow.run(question, { onEvent: recorder.onEvent });
 * const replay = ReplayProvider.from(...recorder.sessions());
 * ```
 */
export class RunRecorder {
  private readonly byId = new Map<string, Session>();

  /** The `onEvent` callback to pass to a run. Also forwards to `next`, if given. */
  readonly onEvent = (event: RunEvent): void => {
    if (event.type === "produced" || event.type === "session") this.add(event.session);
    this.next?.(event);
  };

  constructor(private readonly next?: (event: RunEvent) => void) {}

  /** Adds a session by hand (the run's input, say). */
  add(session: Session): void {
    const known = this.byId.get(session.id);
    if (!known || known.length < session.length) this.byId.set(session.id, session);
  }

  /** The sessions recorded, in the order first seen. */
  sessions(): Session[] {
    return [...this.byId.values()];
  }

  /** Every distinct chunk of the recorded sessions (by id), in the order first seen. */
  chunks(): Chunk[] {
    const seen = new Set<string>();
    const out: Chunk[] = [];
    for (const session of this.byId.values()) {
      for (const chunk of session.chunks) {
        if (seen.has(chunk.id)) continue;
        seen.add(chunk.id);
        out.push(chunk);
      }
    }
    return out;
  }
}
