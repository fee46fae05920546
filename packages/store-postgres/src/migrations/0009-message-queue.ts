/**
 * Messages queued behind a session's active run (the busy-session policy `enqueue`). The partial
 * index holds only pending messages, in the order a session's are submitted.
 *
 * Additive: code written for migration 8 keeps working beside it.
 */
export const MESSAGE_QUEUE = `
CREATE TABLE {schema}.message_queue (
  id uuid PRIMARY KEY,
  tenant_id text NOT NULL,
  project_id text,
  session_id text NOT NULL,
  workflow text NOT NULL,
  input text NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}',
  priority integer NOT NULL DEFAULT 0,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'submitted', 'failed')),
  run_id uuid,
  error jsonb,
  visible_at timestamptz NOT NULL DEFAULT now(),
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE INDEX message_queue_pending ON {schema}.message_queue (tenant_id, session_id, created_at, id)
  WHERE status = 'pending';
`;
