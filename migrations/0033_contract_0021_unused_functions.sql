-- Drops two functions no binary knowing migration 0021 or later calls:
-- ctxd_finish_and_claim (migration 0006; ctxd_end_and_claim ends and claims jobs tenant
-- by tenant since 0022, as rewritten by 0032) and ctxd_log_segments (0014; a fork's log
-- segments are written into each statement since 0021: sql/forks/segments.sql).
-- On a Citus coordinator they were the two functions left depending on tables outside
-- Citus's metadata when it placed the tables.
drop function if exists ctxd_finish_and_claim(bigint[], text[], text[], text[], text[], double precision[], text[], double precision, text);
drop function if exists ctxd_log_segments(bigint);
