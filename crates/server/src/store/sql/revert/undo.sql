-- Undoes the compactions $2 (summaries they wrote: $3) of session $1, after their
-- messages' view states were given back (restore.sql): the summaries they condensed
-- (written before them; the session's own, or for a fork those it reuses by link) are
-- active again; the summaries they wrote leave the view (kept, marked reverted; a
-- compaction's summaries are always its session's own); the records are marked undone
-- by the revert's event $4. $5: the session's tenant.
with unlinked as (
   update summaries set parent_id = null
   where session_id = $1 and tenant_id = $5 and parent_id = any($3::bigint[])
     and id <> all($3::bigint[])
), unlinked_reused as (
   update summary_links set parent_id = null
   where session_id = $1 and tenant_id = $5 and parent_id = any($3::bigint[])
), marked as (
   update summaries set reverted_at = now()
   where session_id = $1 and tenant_id = $5 and id = any($3::bigint[])
), undone as (
   update compactions set reverted_at = now(), reverted_by_seq = $4
   where session_id = $1 and tenant_id = $5 and id = any($2::bigint[])
)
select 1
