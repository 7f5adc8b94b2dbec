-- Gives back to session $1 (tenant $5), whose seqs up to $3 are inherited, $4 its
-- dependants locked by the caller, the view state and tokens each message had before
-- the oldest of the compactions $2 that touched it, by ctxd_restore_views (migration
-- 0031 says how, and why a function). The seqs restored, in order.
select ctxd_restore_views($1, $5, $2, $3, $4)
