/**
 * The journal's and the effect ledger's inserts no longer check the run's foreign key (ADR 0018,
 * decision 8). Every one of them is guarded by the run's row, share-locked
 * by the same statement (`guardCte`): the run exists and cannot be deleted before the write
 * commits, which is all the key's check established, and the check itself (a second lookup of the
 * run row, inside the insert's trigger) was a fifth of each journaled call's statement.
 *
 * `ON DELETE CASCADE` goes with the keys, so one statement-level trigger on `runs` deletes the
 * journal entries and effects of the runs a statement deleted (retention), whoever deletes them.
 *
 * Additive: code written for migration 4 keeps working beside it (its writes are guarded the same
 * way, and its deletes of runs still take their journal and effects with them).
 */
export const JOURNAL_WITHOUT_RUN_CHECKS = `
ALTER TABLE {schema}.journal DROP CONSTRAINT journal_run_id_fkey;
ALTER TABLE {schema}.effects DROP CONSTRAINT effects_run_id_fkey;

CREATE FUNCTION {schema}.runs_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM {schema}.journal j USING gone WHERE j.run_id = gone.id;
  DELETE FROM {schema}.effects e USING gone WHERE e.run_id = gone.id;
  RETURN NULL;
END
$$;

CREATE TRIGGER runs_gone AFTER DELETE ON {schema}.runs
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION {schema}.runs_gone();
`;
