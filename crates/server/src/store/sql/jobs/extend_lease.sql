update jobs set lease_until = now() + make_interval(secs => $3)
from (select set_config('synchronous_commit', 'off', true)) settings
where id = $1 and tenant_id = $4 and locked_by = $2 and state = 'running'
