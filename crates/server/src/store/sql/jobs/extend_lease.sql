update jobs set lease_until = now() + make_interval(secs => $3)
where id = $1 and tenant_id = $4 and locked_by = $2 and state = 'running'
