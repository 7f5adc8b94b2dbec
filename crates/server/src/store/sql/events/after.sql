select {columns},
    tx < pg_snapshot_xmin(pg_current_snapshot())::text::bigint as visible
from events where ($1::bigint is null or tenant_id = $1) and (tx, id) > ($2, $3)
order by tx, id limit $4
