-- A fork of session $6 (named $5, its rows past $8 its own) at seq $7, named $2 in
-- tenant $1, by ctxd_create_fork (migration 0031 says what it writes, and why a
-- function): policy $3, metadata $4, the engine's aggregates $9, summaries reused $10,
-- view states given back $11–$13, SESSION_FORKED $14, $15 announced on $16, budget
-- status $17. The fork's row.
select {columns}
from ctxd_create_fork($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15,
    $16, $17)
