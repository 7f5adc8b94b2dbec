-- The queued events of session $1 (tenant $6): kinds $2, details $3, the budget status
-- $4 (null: unchanged), announced on $5 (migration 0024 says why a function).
select ctxd_write_events($1, $6, $2, $3, $4, $5)
