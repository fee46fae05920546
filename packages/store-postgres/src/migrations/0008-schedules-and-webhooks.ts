/**
 * Cron schedules, webhook endpoints and the webhook outbox (ADR 0031). `schedules_due` holds only
 * enabled schedules with a next firing, so a tick's lookup reads the few that are due. The
 * outbox is filled by a trigger on `runs`: every change that ends or parks a run (whichever
 * statement makes it: a finish, a park, a cancel, a sweep, an interrupt's timeout) writes its
 * deliveries in its own transaction, and a tenant without webhooks costs one index probe per
 * such change.
 *
 * Additive: code written for migration 7 keeps working beside it (the trigger writes only the
 * new tables).
 */
export const SCHEDULES_AND_WEBHOOKS = `
CREATE TABLE {schema}.schedules (
  id uuid PRIMARY KEY,
  tenant_id text NOT NULL,
  project_id text,
  workflow text NOT NULL,
  input text NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}',
  cron text NOT NULL,
  timezone text NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  next_fire_at timestamptz,
  last_fired_at timestamptz,
  last_run_id uuid,
  last_error jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX schedules_tenant ON {schema}.schedules (tenant_id, id);
CREATE INDEX schedules_due ON {schema}.schedules (next_fire_at) WHERE enabled AND next_fire_at IS NOT NULL;

CREATE TABLE {schema}.webhooks (
  id uuid PRIMARY KEY,
  tenant_id text NOT NULL,
  project_id text,
  url text NOT NULL,
  secret text NOT NULL,
  events text[] NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX webhooks_tenant ON {schema}.webhooks (tenant_id, id);

CREATE TABLE {schema}.webhook_deliveries (
  id uuid PRIMARY KEY,
  webhook_id uuid NOT NULL REFERENCES {schema}.webhooks (id) ON DELETE CASCADE,
  tenant_id text NOT NULL,
  event text NOT NULL,
  run_id uuid NOT NULL,
  payload jsonb NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  delivered_at timestamptz
);

CREATE INDEX webhook_deliveries_due ON {schema}.webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_tenant ON {schema}.webhook_deliveries (tenant_id, created_at, id);
CREATE INDEX webhook_deliveries_webhook ON {schema}.webhook_deliveries (webhook_id);

CREATE FUNCTION {schema}.run_webhook_deliveries() RETURNS trigger LANGUAGE plpgsql AS $body$
DECLARE
  kind text := CASE WHEN NEW.status IN ('waiting', 'needs_review') THEN 'run.parked' ELSE 'run.ended' END;
BEGIN
  INSERT INTO {schema}.webhook_deliveries (id, webhook_id, tenant_id, event, run_id, payload)
  SELECT gen_random_uuid(), w.id, NEW.tenant_id, kind, NEW.id, jsonb_build_object(
    'runId', NEW.id, 'status', NEW.status, 'previousStatus', OLD.status, 'workflow', NEW.workflow,
    'planHash', NEW.plan_hash, 'sessionId', NEW.session_id, 'projectId', NEW.project_id,
    'error', CASE WHEN NEW.error IS NULL THEN NULL ELSE NEW.error::jsonb END)
  FROM {schema}.webhooks w
  WHERE w.tenant_id = NEW.tenant_id AND w.enabled AND kind = ANY (w.events)
    AND (w.project_id IS NULL OR w.project_id = NEW.project_id);
  RETURN NULL;
END
$body$;

CREATE TRIGGER runs_webhook_deliveries AFTER UPDATE OF status ON {schema}.runs
  FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status
    AND NEW.status IN ('succeeded', 'failed', 'cancelled', 'timed_out', 'waiting', 'needs_review'))
  EXECUTE FUNCTION {schema}.run_webhook_deliveries();
`;
