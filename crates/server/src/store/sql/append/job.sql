-- A summarization job, unless one of its kind is pending.
enqueued as (
    insert into jobs (tenant_id, session_id, kind, args, priority, max_attempts, notify_done)
    select s.tenant_id, $1, $47, $48, $49, $50, $51
    from s
    on conflict (session_id, kind, tenant_id) where state in ('available', 'running', 'retryable')
        do nothing
    returning id
)
