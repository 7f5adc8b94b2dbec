-- ctxd_end_and_claim (migration 0022) again, the same ends and claims, written so a
-- distributed database plans its updates (docs/decisions/0028-citus-distribution.md):
-- Citus 13.2's coordinator crashes deparsing an array subscript in an update's target
-- list, and refuses now() inside a CASE there (both found on a cluster: a burst of
-- jobs took it down). The elements are read into variables first, and the time once.
create or replace function ctxd_end_and_claim(
    p_ids bigint[], p_tenants bigint[], p_workers text[], p_states text[],
    p_results text[], p_errors text[], p_delays float8[], p_takers text[],
    p_lease float8, p_channel text)
returns table (held bigint, job jobs, external_id text)
language plpgsql as $$
declare
    i int;
    ended text;
    ended_with text;
    failure text;
    delay float8;
    started timestamptz := now();
    lease_end timestamptz := now() + make_interval(secs => p_lease);
    announce boolean;
    taker text;
    next_tenant bigint;
    next_id bigint;
    passed bigint[] := '{}';
begin
    perform set_config('synchronous_commit', 'off', true);
    for i in 1 .. coalesce(array_length(p_ids, 1), 0) loop
        ended := p_states[i];
        ended_with := p_results[i];
        failure := p_errors[i];
        delay := p_delays[i];
        update jobs j set
            state = case when ended = 'retryable' and j.attempts >= j.max_attempts
                then 'discarded' else ended end,
            result = coalesce(ended_with::jsonb, j.result),
            last_error = coalesce(failure, j.last_error),
            run_at = case when ended = 'retryable'
                then started + make_interval(secs => delay)
                else j.run_at end,
            locked_by = null, lease_until = null,
            finished_at = case when ended = 'retryable' and j.attempts < j.max_attempts
                then null else started end
        where j.id = p_ids[i] and j.tenant_id = p_tenants[i]
            and j.locked_by = p_workers[i] and j.state = 'running'
        returning j.notify_done and j.state in ('completed', 'discarded', 'cancelled')
            into announce;
        if found then
            held := p_ids[i];
            job := null;
            external_id := null;
            return next;
            if announce then
                perform pg_notify(p_channel, p_ids[i]::text);
            end if;
        end if;
    end loop;
    i := 1;
    while i <= coalesce(array_length(p_takers, 1), 0) loop
        select j.tenant_id into next_tenant from jobs j
        where j.state in ('available', 'retryable') and j.run_at <= now()
            and j.tenant_id <> all(passed)
        order by j.priority desc, j.run_at, j.id
        limit 1;
        exit when next_tenant is null;
        select j.id into next_id from jobs j
        where j.tenant_id = next_tenant and j.state in ('available', 'retryable')
            and j.run_at <= now()
        order by j.priority desc, j.run_at, j.id
        limit 1
        for update skip locked;
        if next_id is null then
            passed := passed || next_tenant;
            continue;
        end if;
        held := null;
        taker := p_takers[i];
        update jobs j set state = 'running', attempts = j.attempts + 1,
            locked_by = taker, lease_until = lease_end
        where j.id = next_id and j.tenant_id = next_tenant
        returning * into job;
        select s.external_id into external_id from sessions s
        where s.id = (job).session_id and s.tenant_id = next_tenant;
        return next;
        i := i + 1;
    end loop;
end
$$;
