/**
 * API tokens, the audit log and a run's project (ADR 0027, decisions 5, 7 and 9). `tokens` keeps
 * the SHA-256 of each secret, never the secret; `audit` is append-only, its id store-wide and
 * increasing (the keyset of its listing). `runs.project_id` is set at submission and never
 * changed, so the partial index of a tenant's project's runs keeps run updates HOT, and runs
 * without a project never enter it.
 *
 * Additive: code written for migration 6 keeps working beside it (it names the run columns it
 * reads, and never reads these tables).
 */
export const ACCESS = `
ALTER TABLE {schema}.runs ADD COLUMN project_id text;

CREATE INDEX runs_project ON {schema}.runs (tenant_id, project_id, id) WHERE project_id IS NOT NULL;

CREATE TABLE {schema}.tokens (
  id uuid PRIMARY KEY,
  tenant_id text NOT NULL,
  project_id text,
  name text NOT NULL,
  grants text[] NOT NULL,
  secret_hash text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz,
  revoked_at timestamptz
);

CREATE INDEX tokens_tenant ON {schema}.tokens (tenant_id, created_at DESC, id DESC);

CREATE TABLE {schema}.audit (
  id bigserial PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  tenant_id text NOT NULL,
  actor text NOT NULL,
  action text NOT NULL,
  outcome text NOT NULL CHECK (outcome IN ('allowed', 'denied', 'failed')),
  resource_kind text NOT NULL,
  resource_id text,
  reason text,
  request_id text,
  attributes jsonb NOT NULL DEFAULT '{}'
);

CREATE INDEX audit_tenant ON {schema}.audit (tenant_id, id);
`;
