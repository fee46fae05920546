/**
 * Narrower checkpoint rows and one small index per run (ADR 0018, decision 7). The
 * table is copied into a new column order so nothing is padded: `event_seq` becomes `integer` and
 * sits beside `seq` (4 bytes less per row; a run's event counter above 2^31 − 1 can no longer
 * commit a checkpoint). `UNIQUE (run_id, seq)` (one 36-byte index entry per checkpoint) gives way
 * to an index on `(run_id, seq >> 5)`: checkpoints of one run in groups of 32 consecutive
 * sequences, which B-tree deduplication stores as one entry with a list of row pointers (about
 * 7 bytes per checkpoint). A lookup by run and sequence reads at most one group; the sequence's
 * uniqueness is kept by the run row (every checkpoint write is guarded by
 * `checkpoint_seq = seq − 1` under the run's row lock). The primary key is packed full
 * (`fillfactor = 100`: ids only grow, so a split page is never filled again). Row rights on the
 * old table are granted again on the new one.
 *
 * Not additive: the columns keep their names and meanings (a release before it could still read
 * and write the rows), but the code that ships with it writes checkpoint bodies of formats 3 and 4
 * (compacted chunk ids), which a release before cannot decode, so an N−1 worker must not run
 * beside it (`--check` of that release refuses the schema). The copy holds the table's lock for
 * its duration: stop the workers, migrate, start the new release.
 */
export const NARROW_CHECKPOINTS = `
CREATE TABLE {schema}.checkpoints_narrow (
  id bigint NOT NULL DEFAULT nextval('{schema}.checkpoint_ids'),
  run_id uuid NOT NULL,
  base_id bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  seq integer NOT NULL,
  event_seq integer NOT NULL DEFAULT 0,
  step_id text NOT NULL DEFAULT '',
  next_step text NOT NULL DEFAULT '',
  body bytea NOT NULL
);

INSERT INTO {schema}.checkpoints_narrow (id, run_id, base_id, created_at, seq, event_seq, step_id, next_step, body)
  SELECT id, run_id, base_id, created_at, seq, event_seq, step_id, next_step, body
  FROM {schema}.checkpoints ORDER BY id;

DO $grants$
DECLARE g record;
BEGIN
  FOR g IN SELECT grantee, string_agg(privilege_type, ', ') AS privileges
    FROM information_schema.role_table_grants
    WHERE table_schema = '{schema}' AND table_name = 'checkpoints' AND grantee <> current_user
    GROUP BY grantee
  LOOP
    EXECUTE format('GRANT %s ON %I.checkpoints_narrow TO %I', g.privileges, '{schema}', g.grantee);
  END LOOP;
END
$grants$;

ALTER TABLE {schema}.checkpoint_artifacts DROP CONSTRAINT checkpoint_artifacts_checkpoint_id_fkey;
DROP TABLE {schema}.checkpoints;
ALTER TABLE {schema}.checkpoints_narrow RENAME TO checkpoints;
ALTER TABLE {schema}.checkpoints ADD CONSTRAINT checkpoints_pkey PRIMARY KEY (id) WITH (fillfactor = 100);
ALTER TABLE {schema}.checkpoints ADD CONSTRAINT checkpoints_run_id_fkey
  FOREIGN KEY (run_id) REFERENCES {schema}.runs (id) ON DELETE CASCADE;
CREATE INDEX checkpoints_run_group ON {schema}.checkpoints (run_id, (seq >> 5));
ALTER TABLE {schema}.checkpoint_artifacts ADD CONSTRAINT checkpoint_artifacts_checkpoint_id_fkey
  FOREIGN KEY (checkpoint_id) REFERENCES {schema}.checkpoints (id) ON DELETE CASCADE;
`;
