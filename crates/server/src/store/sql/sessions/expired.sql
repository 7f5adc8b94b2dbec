-- Sessions unchanged for longer than their policy's retention_seconds, oldest change
-- first, at most $1 (the partial index sessions_retained serves this).
select tenant_id, external_id
from sessions
where deleted_at is null
    and (policy ->> 'retention_seconds')::bigint > 0
    and updated_at < now() - make_interval(secs => (policy ->> 'retention_seconds')::bigint)
order by updated_at
limit $1
