-- The pending job of kind $59 of the session: the one an append relied on (job $60;
-- null: none) if it is still pending. A job can end without touching the session row.
(select j.id from jobs j
 where j.session_id = $1 and j.tenant_id = $61 and j.kind = $59
   and j.state in ('available', 'running', 'retryable'))
