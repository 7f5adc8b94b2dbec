-- FinishSession: the child ($1, of tenant $6) finished at a new version, with
-- SESSION_FINISHED ($3, $4) on it and, while it exists, on its parent ($2; null: none),
-- announced on $5: (the child's version or null, events written). Runs in the caller's
-- transaction, which holds the child's row lock (and the parent's, after appending the
-- answer there): child first, then parent, the order every two-session lock takes.
-- Migration 0027 says why a function.
select version, events from ctxd_finish_child($1, $2, $6, $3, $4, $5)
