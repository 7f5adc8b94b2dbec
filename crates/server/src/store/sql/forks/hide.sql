-- Deletes session $1 that forks still read (renamed out of the id space, marked
-- deleted, its waiting jobs cancelled) and writes its SESSION_DELETED event under the
-- name it had ($2; kind $3, detail $4, announced on $5); $6: its tenant. Its message
-- count. Migration 0026 says why a function.
select ctxd_hide_session($1, $6, $2, $3, $4, $5)
