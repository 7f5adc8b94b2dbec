-- A session of tenant $1 named $2 (policy $3, metadata $4), with its link to its parent
-- when it has one ($5: the parent's id, $6 its tool call, $7 the ancestors; all null for
-- a root). Migration 0029 says why a function.
select {columns} from ctxd_create_session($1, $2, $3, $4, $5, $6, $7)
