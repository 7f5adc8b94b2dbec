-- Locks session $2 of tenant $1 only if it is still past its retention (a write that
-- committed since the sweep read it keeps it): the retention sweep's lock.
select id
from sessions
where tenant_id = $1 and external_id = $2
    and deleted_at is null
    and (policy ->> 'retention_seconds')::bigint > 0
    and updated_at < now() - make_interval(secs => (policy ->> 'retention_seconds')::bigint)
for update
