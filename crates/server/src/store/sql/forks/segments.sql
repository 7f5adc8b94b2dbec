-- Where session $1's messages are: (owner, first seq, last seq) per ancestor range, then
-- its own rows past base_seq (ctxd_log_segments's rows), written into each statement
-- that reads them as `{segments:$n}`, $n the session's tenant, so that every table the
-- statement reads is filtered by it (store::forks::with_segments).
(select l.ancestor_id as owner, l.first_seq, l.last_seq from session_lineage l
 where l.session_id = $1 and l.tenant_id = {tenant} and l.first_seq <= l.last_seq
 union all
 select s.id, s.base_seq + 1, 9223372036854775807 from sessions s
 where s.id = $1 and s.tenant_id = {tenant})
