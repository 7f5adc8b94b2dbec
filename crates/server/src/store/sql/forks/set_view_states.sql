-- Sets view states $3 and tokens $4 of seqs $2 for session $1 (tenant $7), whose seqs up
-- to $5 are inherited, $6 its dependants, locked by the caller, by
-- ctxd_set_view_states (migration 0031 says how, and why a function).
select ctxd_set_view_states($1, $7, $2, $3, $4, $5, $6)
