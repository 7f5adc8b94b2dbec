-- UpdateLedger under the session's row lock (session $1 of tenant $8): todos and notes
-- ($2 kinds, $3 keys, $4 texts, $5 seqs, $6 statuses) inserted or replaced, removed
-- notes ($7) deleted. Migration 0027 says why a function.
select ctxd_update_ledger($1, $8, $2, $3, $4, $5, $6, $7)
