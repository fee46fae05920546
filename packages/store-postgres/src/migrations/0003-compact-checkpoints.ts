/**
 * Compact checkpoints (ADR 0018, decision 7). A checkpoint row keeps everything but its keys in one compressed
 * `body` (session id, chunk ops, lineage, placement and the chunks it introduces: no `chunks` row
 * per chunk), and stands for its own `run.checkpoint` event (`event_seq`, `step_id`). Columns are
 * NOT NULL with an empty value (`0`, `''`) for "none", so a row carries no null bitmap, and laid
 * out so nothing is padded. Rows of the first format are copied with a plain-JSON body that names
 * their chunks, which stay in `chunks`. The artifacts a checkpoint's claim-check stubs name move to
 * `checkpoint_artifacts`, the newest checkpoint of each session id to `session_heads`. Runs count
 * the crashes of their current step (`crashes`). Not additive: a release before it cannot read
 * the new rows.
 */
export const COMPACT_CHECKPOINTS = `
CREATE TABLE {schema}.checkpoints_compact (
  id bigint PRIMARY KEY DEFAULT nextval('{schema}.checkpoint_ids'),
  run_id uuid NOT NULL REFERENCES {schema}.runs (id) ON DELETE CASCADE,
  base_id bigint NOT NULL DEFAULT 0,
  event_seq bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  seq integer NOT NULL,
  step_id text NOT NULL DEFAULT '',
  next_step text NOT NULL DEFAULT '',
  body bytea NOT NULL,
  UNIQUE (run_id, seq)
);

INSERT INTO {schema}.checkpoints_compact (id, run_id, base_id, created_at, seq, next_step, body)
  SELECT id, run_id, coalesce(base_id, 0), created_at, seq, coalesce(next_step, ''),
    '\\x00'::bytea || convert_to(json_build_object('s', session_id, 'o', chunk_ops, 'l', lineage, 'p', placement)::text, 'UTF8')
  FROM {schema}.checkpoints;

DROP TABLE {schema}.checkpoints;
ALTER TABLE {schema}.checkpoints_compact RENAME TO checkpoints;
ALTER INDEX {schema}.checkpoints_compact_pkey RENAME TO checkpoints_pkey;
ALTER INDEX {schema}.checkpoints_compact_run_id_seq_key RENAME TO checkpoints_run_id_seq_key;

CREATE TABLE {schema}.checkpoint_artifacts (
  checkpoint_id bigint NOT NULL REFERENCES {schema}.checkpoints (id) ON DELETE CASCADE,
  tenant_id text NOT NULL,
  digest text NOT NULL,
  PRIMARY KEY (checkpoint_id, tenant_id, digest)
);
CREATE INDEX checkpoint_artifacts_tenant ON {schema}.checkpoint_artifacts (tenant_id);

CREATE TABLE {schema}.session_heads (
  tenant_id text NOT NULL,
  session_id text NOT NULL,
  checkpoint_id bigint NOT NULL,
  PRIMARY KEY (tenant_id, session_id)
);

INSERT INTO {schema}.session_heads (tenant_id, session_id, checkpoint_id)
  SELECT r.tenant_id, convert_from(substring(k.body from 2), 'UTF8')::json->>'s', max(k.id)
  FROM {schema}.checkpoints k JOIN {schema}.runs r ON r.id = k.run_id
  GROUP BY 1, 2;

DROP INDEX {schema}.runs_holder;
DROP INDEX {schema}.runs_tenant_running;

ALTER TABLE {schema}.runs ADD COLUMN crashes integer NOT NULL DEFAULT 0;
`;
