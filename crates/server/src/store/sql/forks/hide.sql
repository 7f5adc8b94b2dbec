-- Deletes session $1 (of tenant $2) that forks still read (renamed out of the id space,
-- marked deleted, its waiting jobs cancelled) and writes its SESSION_DELETED event
-- (kind $3, detail $4, announced on $5) under the name it had ($6). Its message count.
-- Migration 0026 says why a function.
select ctxd_hide_session($1, $2, $6, $3, $4, $5)
