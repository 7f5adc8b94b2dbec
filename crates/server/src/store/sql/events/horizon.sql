select tx, id from events
where ($1::bigint is null or tenant_id = $1)
  and tx < $2
order by tx desc, id desc limit 1
