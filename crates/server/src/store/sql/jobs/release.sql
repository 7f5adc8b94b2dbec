update jobs set state = 'available', attempts = greatest(attempts - 1, 0),
   locked_by = null, lease_until = null, run_at = now()
where id = $1 and tenant_id = $3 and locked_by = $2 and state = 'running'
