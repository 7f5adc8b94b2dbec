-- after.sql's read of the tree of session $5 (its descendants' events too).
select {columns}, tx < $6 as visible
from events
where tenant_id = $1 and (tx, id) > ($2, $3)
  and (session_id = $5 or session_id in (
      select l.session_id from session_links l
      where l.tenant_id = $1 and l.ancestors @> array[$5::bigint]))
order by tx, id limit $4
