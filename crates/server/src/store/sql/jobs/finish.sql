select f.held, j.locked_by, {columns}, f.external_id
from ctxd_end_and_claim($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) f
cross join lateral (select (f.job).*) j
