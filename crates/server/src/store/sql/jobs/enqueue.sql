-- A job of kind $3 for session $2 (tenant $1), args $4, priority $5, attempts $6,
-- announcing its end $7, unless one of its kind is pending: (id, created). Migration
-- 0025 says why a function.
select id, created from ctxd_enqueue_job($1, $2, $3, $4, $5, $6, $7)
