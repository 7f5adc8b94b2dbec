-- A job whose worker stopped on its last attempt (its lease lapsed and it was rescued)
-- is not dropped: the rescue makes it due again with this set, and the worker that
-- claims it ends that attempt as an exhausted job ends, with the deterministic fallback
-- instead of the model (see src/store/sql/jobs/rescue.sql).
alter table jobs add column fallback boolean not null default false;
