/**
 * Trace context (issue 24): the W3C trace context a run continues, and the trace and span of each
 * journal entry's live call. Additive: nullable columns only, so code written for migration 9
 * keeps working beside it.
 */
export const TRACE_CONTEXT = `
ALTER TABLE {schema}.runs ADD COLUMN trace_context jsonb;
ALTER TABLE {schema}.journal ADD COLUMN trace_id text, ADD COLUMN span_id text;
`;
