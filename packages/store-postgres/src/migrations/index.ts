import { createHash } from "node:crypto";
import { INITIAL } from "./0001-initial.js";
import { JOURNAL } from "./0002-journal.js";
import { COMPACT_CHECKPOINTS } from "./0003-compact-checkpoints.js";
import { NARROW_CHECKPOINTS } from "./0004-narrow-checkpoints.js";
import { JOURNAL_WITHOUT_RUN_CHECKS } from "./0005-journal-without-run-checks.js";
import { DEPLOYMENTS } from "./0006-deployments.js";
import { ACCESS } from "./0007-access.js";
import { SCHEDULES_AND_WEBHOOKS } from "./0008-schedules-and-webhooks.js";
import { MESSAGE_QUEUE } from "./0009-message-queue.js";
import { TRACE_CONTEXT } from "./0010-trace-context.js";

/** One migration: applied once, in order, recorded with its checksum. */
export interface Migration {
  /** 1, 2, 3… without gaps. */
  readonly version: number;
  readonly name: string;
  /** SQL with `{schema}` where the schema name goes. */
  readonly sql: string;
  /**
   * Only adds (tables, columns with defaults, indexes): code written for the schema before it keeps
   * working, so `--check` of an older release accepts a database that has it.
   */
  readonly additive: boolean;
}

/** The migration set, oldest first. Never edit a released migration: add the next one. */
export const MIGRATIONS: readonly Migration[] = Object.freeze([
  { version: 1, name: "initial", sql: INITIAL, additive: false },
  { version: 2, name: "journal", sql: JOURNAL, additive: true },
  { version: 3, name: "compact_checkpoints", sql: COMPACT_CHECKPOINTS, additive: false },
  { version: 4, name: "narrow_checkpoints", sql: NARROW_CHECKPOINTS, additive: false },
  { version: 5, name: "journal_without_run_checks", sql: JOURNAL_WITHOUT_RUN_CHECKS, additive: true },
  { version: 6, name: "deployments", sql: DEPLOYMENTS, additive: true },
  { version: 7, name: "access", sql: ACCESS, additive: true },
  { version: 8, name: "schedules_and_webhooks", sql: SCHEDULES_AND_WEBHOOKS, additive: true },
  { version: 9, name: "message_queue", sql: MESSAGE_QUEUE, additive: true },
  { version: 10, name: "trace_context", sql: TRACE_CONTEXT, additive: true },
]);

/** SHA-256 of a migration's SQL (with the placeholder), the checksum recorded when it is applied. */
export function checksumOf(migration: Migration): string {
  return createHash("sha256").update(migration.sql).digest("hex");
}
