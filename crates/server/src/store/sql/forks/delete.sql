-- Deletes session $1 (of tenant $2; locked by the caller, read by no fork) with its
-- whole log and writes its SESSION_DELETED event (kind $3, detail $4, announced on $5).
-- Its message count. Migration 0026 says why a function.
select ctxd_delete_session($1, $2, $3, $4, $5)
