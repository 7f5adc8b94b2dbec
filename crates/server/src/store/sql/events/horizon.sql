select tx, id from events
where ($1::bigint is null or tenant_id = $1)
  and tx < pg_snapshot_xmin(pg_current_snapshot())::text::bigint
order by tx desc, id desc limit 1
