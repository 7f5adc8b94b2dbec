-- Events after ($2, $3) of tenant $1 (null: all), each visible when its transaction id
-- is below the horizon $5 (store::events::horizon_xid, read before this statement).
select {columns}, tx < $5 as visible
from events where ($1::bigint is null or tenant_id = $1) and (tx, id) > ($2, $3)
order by tx, id limit $4
