-- The batch's summarization jobs, one per item that asks, unless one of its kind is
-- pending (job.sql's, per item). `$J…` are numbered when the statement is put together.
batch_jobs as (
    insert into jobs (tenant_id, session_id, kind, args, priority, max_attempts, notify_done)
    select s.tenant_id, s.id, q.kind, q.args, q.priority, q.max_attempts, q.notify_done
    from unnest($J1::int[], $J2::text[], $J3::jsonb[], $J4::smallint[], $J5::int[],
        $J6::bool[]) as q(idx, kind, args, priority, max_attempts, notify_done)
    join s on s.b_idx = q.idx
    on conflict (session_id, kind, tenant_id) where state in ('available', 'running', 'retryable')
        do nothing
    returning id, session_id
)
