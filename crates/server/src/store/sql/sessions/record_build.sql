-- What a build of session $1 (tenant $13) sent: seqs $2..$3, system $4, history $5,
-- estimate $6, tools $7 tokens, view epoch $8, whether it extended the last one ($9);
-- its chart point's ledger $10, summary $11 and window $12 tokens. The session's row as
-- it leaves it, with its version. Migration 0028 says why a function.
select {columns}, r.row_version
from ctxd_record_build($1, $13, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) r
cross join lateral (select (r.session).*) s
