update jobs set notify_done = notify_done or $2,
   args = case when $3 > priority and state <> 'running' then $4 else args end,
   priority = greatest(priority, $3)
where id = $1 and tenant_id = $5
