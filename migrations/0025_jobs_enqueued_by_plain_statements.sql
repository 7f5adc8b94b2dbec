-- Enqueues a job of p_kind for session p_session (tenant p_tenant) unless one of its
-- kind is pending, as sql/jobs/enqueue.sql did in one statement whose common table
-- expression inserted it (a distributed database plans that in parts: migration 0024,
-- docs/decisions/0028-citus-distribution.md). Plain statements on the tenant: the
-- insert, then — when it made a new job — the session's row touched (a new pending job
-- changes what an append decides, which enqueues none of its own: an append that read
-- the row before retries, its write guarded by the row's xmin); when one was pending,
-- its id. Returns (id, whether this call created it).
create function ctxd_enqueue_job(
    p_tenant bigint, p_session bigint, p_kind text, p_args jsonb, p_priority smallint,
    p_max_attempts int, p_notify_done boolean)
returns table (id bigint, created boolean)
language plpgsql as $$
declare
    new_id bigint;
begin
    insert into jobs (tenant_id, session_id, kind, args, priority, max_attempts,
        notify_done)
    values (p_tenant, p_session, p_kind, p_args, p_priority, p_max_attempts,
        p_notify_done)
    on conflict (session_id, kind, tenant_id)
        where state in ('available', 'running', 'retryable')
    do nothing
    returning jobs.id into new_id;
    if new_id is not null then
        update sessions set updated_at = now()
        where sessions.id = p_session and tenant_id = p_tenant;
        return query select new_id, true;
        return;
    end if;
    return query
        select j.id, false from jobs j
        where j.session_id = p_session and j.tenant_id = p_tenant and j.kind = p_kind
          and j.state in ('available', 'running', 'retryable');
end $$;
