/**
 * The first schema. `{schema}` is replaced by the configured schema name (checksums are computed
 * over the text with the placeholder, so they do not depend on it).
 */
export const INITIAL = `
CREATE TABLE {schema}.plans (
  hash text PRIMARY KEY,
  name text NOT NULL,
  version text NOT NULL,
  definition text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE {schema}.runs (
  id uuid PRIMARY KEY,
  tenant_id text NOT NULL,
  session_id text NOT NULL,
  plan_hash text NOT NULL REFERENCES {schema}.plans (hash),
  workflow text NOT NULL,
  status text NOT NULL CHECK (status IN ('queued', 'running', 'waiting', 'succeeded', 'failed', 'cancelled', 'timed_out', 'needs_review')),
  version bigint NOT NULL DEFAULT 1,
  priority integer NOT NULL DEFAULT 0 CHECK (priority BETWEEN -100 AND 100),
  idempotency_key text,
  fingerprint text NOT NULL,
  next_step text,
  attempt integer NOT NULL DEFAULT 1,
  not_before timestamptz NOT NULL DEFAULT now(),
  queued_at timestamptz NOT NULL DEFAULT now(),
  deadline timestamptz,
  lease_holder text,
  fencing_token bigint NOT NULL DEFAULT 0,
  lease_expires_at timestamptz,
  checkpoint_seq integer NOT NULL DEFAULT 0,
  checkpoint_id bigint,
  event_seq bigint NOT NULL DEFAULT 0,
  error text,
  metadata text NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  ended_at timestamptz
);

CREATE UNIQUE INDEX runs_idempotency ON {schema}.runs (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE UNIQUE INDEX runs_one_active_per_session ON {schema}.runs (tenant_id, session_id)
  WHERE status IN ('queued', 'running', 'waiting', 'needs_review');
CREATE INDEX runs_claim ON {schema}.runs (priority DESC, queued_at, id) WHERE status = 'queued';
CREATE INDEX runs_lease_expiry ON {schema}.runs (lease_expires_at) WHERE status = 'running';
CREATE INDEX runs_holder ON {schema}.runs (lease_holder) WHERE status = 'running';
CREATE INDEX runs_tenant_running ON {schema}.runs (tenant_id) WHERE status = 'running';
CREATE INDEX runs_deadline ON {schema}.runs (deadline)
  WHERE deadline IS NOT NULL AND status IN ('queued', 'waiting', 'needs_review');
CREATE INDEX runs_tenant ON {schema}.runs (tenant_id, id);
CREATE INDEX runs_ended ON {schema}.runs (workflow, ended_at) WHERE ended_at IS NOT NULL;

CREATE TABLE {schema}.run_events (
  run_id uuid NOT NULL REFERENCES {schema}.runs (id) ON DELETE CASCADE,
  seq bigint NOT NULL,
  type text NOT NULL,
  data text NOT NULL,
  at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, seq)
);

CREATE SEQUENCE {schema}.checkpoint_ids;

CREATE TABLE {schema}.checkpoints (
  id bigint PRIMARY KEY DEFAULT nextval('{schema}.checkpoint_ids'),
  run_id uuid NOT NULL REFERENCES {schema}.runs (id) ON DELETE CASCADE,
  tenant_id text NOT NULL,
  seq integer NOT NULL,
  session_id text NOT NULL,
  base_id bigint REFERENCES {schema}.checkpoints (id),
  depth integer NOT NULL,
  chunk_ops text NOT NULL,
  lineage text NOT NULL,
  placement text,
  next_step text,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (run_id, seq)
);

CREATE INDEX checkpoints_session ON {schema}.checkpoints (tenant_id, session_id, id);
CREATE INDEX checkpoints_base ON {schema}.checkpoints (base_id) WHERE base_id IS NOT NULL;

CREATE TABLE {schema}.chunks (
  tenant_id text NOT NULL,
  id text NOT NULL,
  body text NOT NULL,
  PRIMARY KEY (tenant_id, id)
);

CREATE TABLE {schema}.tenant_limits (
  tenant_id text PRIMARY KEY,
  max_running integer NOT NULL CHECK (max_running > 0)
);
`;
