/**
 * Workflow names resolved through the store (issue 21): `plan_versions` holds the one plan each
 * (name, version) stands for, so a second plan under a version already registered is refused, and
 * `deployments` the revision each name points at, which `submit(name)` starts.
 *
 * Databases written before this migration may hold several plans under one (name, version): the
 * newest of them keeps the version, the others stay executable by hash. Each name is deployed at
 * its newest plan.
 *
 * Additive: code written for migration 5 keeps working beside it (it never reads these tables).
 */
export const DEPLOYMENTS = `
CREATE TABLE {schema}.plan_versions (
  name text NOT NULL,
  version text NOT NULL,
  hash text NOT NULL REFERENCES {schema}.plans (hash),
  PRIMARY KEY (name, version)
);

INSERT INTO {schema}.plan_versions (name, version, hash)
  SELECT DISTINCT ON (name, version) name, version, hash FROM {schema}.plans
  ORDER BY name, version, created_at DESC, hash;

CREATE TABLE {schema}.deployments (
  name text PRIMARY KEY,
  hash text NOT NULL REFERENCES {schema}.plans (hash),
  previous text,
  deployed_at timestamptz NOT NULL DEFAULT now()
);

INSERT INTO {schema}.deployments (name, hash, deployed_at)
  SELECT DISTINCT ON (name) name, hash, created_at FROM {schema}.plans
  ORDER BY name, created_at DESC, hash;

CREATE INDEX plans_by_name ON {schema}.plans (name, created_at DESC);
`;
