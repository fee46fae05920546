/**
 * The step journal, the effect ledger and interrupts (issue 13). Additive: new tables only, each
 * row owned by a run (deleted with it by retention and erasure).
 */
export const JOURNAL = `
CREATE TABLE {schema}.journal (
  run_id uuid NOT NULL REFERENCES {schema}.runs (id) ON DELETE CASCADE,
  checkpoint_seq integer NOT NULL,
  position text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('model', 'tool', 'call')),
  fingerprint text NOT NULL,
  label text NOT NULL,
  result text NOT NULL,
  fencing_token bigint NOT NULL,
  at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, checkpoint_seq, position)
);

CREATE TABLE {schema}.effects (
  id uuid PRIMARY KEY,
  seq bigserial NOT NULL UNIQUE,
  run_id uuid NOT NULL REFERENCES {schema}.runs (id) ON DELETE CASCADE,
  tenant_id text NOT NULL,
  checkpoint_seq integer NOT NULL,
  step_id text NOT NULL,
  position text NOT NULL,
  tool text NOT NULL,
  call_id text NOT NULL,
  effect text NOT NULL CHECK (effect IN ('read_only', 'idempotent', 'non_idempotent')),
  idempotency_key text,
  arguments_digest text NOT NULL,
  arguments text NOT NULL,
  status text NOT NULL CHECK (status IN ('prepared', 'dispatched', 'succeeded', 'failed', 'needs_review')),
  fencing_token bigint NOT NULL,
  worker_id text NOT NULL,
  dispatches integer NOT NULL DEFAULT 1,
  outcome text,
  resolution text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX effects_key ON {schema}.effects (run_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE UNIQUE INDEX effects_position ON {schema}.effects (run_id, checkpoint_seq, position) WHERE idempotency_key IS NULL;
CREATE INDEX effects_review ON {schema}.effects (tenant_id, seq) WHERE status = 'needs_review';
CREATE INDEX effects_tenant ON {schema}.effects (tenant_id, seq);
CREATE INDEX effects_run ON {schema}.effects (run_id, seq);

CREATE TABLE {schema}.interrupts (
  id uuid PRIMARY KEY,
  seq bigserial NOT NULL UNIQUE,
  run_id uuid NOT NULL REFERENCES {schema}.runs (id) ON DELETE CASCADE,
  tenant_id text NOT NULL,
  checkpoint_seq integer NOT NULL,
  step_id text NOT NULL,
  position text NOT NULL,
  fingerprint text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('approval', 'input', 'review')),
  request text NOT NULL,
  payload_schema text,
  on_timeout text,
  status text NOT NULL CHECK (status IN ('pending', 'decided', 'expired')),
  decision text,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz,
  decided_at timestamptz,
  UNIQUE (run_id, checkpoint_seq, position)
);

CREATE INDEX interrupts_pending ON {schema}.interrupts (tenant_id, seq) WHERE status = 'pending';
CREATE INDEX interrupts_tenant ON {schema}.interrupts (tenant_id, seq);
CREATE INDEX interrupts_run ON {schema}.interrupts (run_id, seq);
CREATE INDEX interrupts_expiry ON {schema}.interrupts (expires_at) WHERE status = 'pending' AND expires_at IS NOT NULL;
`;
