-- Deletes session $1 (locked by the caller, read by no fork) with its whole log and
-- writes its SESSION_DELETED event (kind $2, detail $3, announced on $4); $5: its
-- tenant. Its message count. Migration 0026 says why a function.
select ctxd_delete_session($1, $5, $2, $3, $4)
