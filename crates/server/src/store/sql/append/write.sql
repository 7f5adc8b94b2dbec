-- Appends $2 (one JSON object each, with its rows of the message columns $3–$16)
-- written by ctxd_append (migration 0030 says why a function), each with the session's
-- row as the write left it. $1: wait for a row another transaction holds; $17, $18: the
-- channels announcing events and jobs.
select r.item, r.locked, r.applied, r.row_version, r.job_id, r.row_version_now,
    r.pending_now, {columns}
from ctxd_append($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16,
    $17, $18) r
cross join lateral (select (r.session).*) s
