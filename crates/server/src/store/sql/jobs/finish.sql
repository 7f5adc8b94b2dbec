select f.held, j.locked_by, {columns}
from ctxd_finish_and_claim($1, $2, $3, $4, $5, $6, $7, $8, $9) f
cross join lateral (select (f.job).*) j
