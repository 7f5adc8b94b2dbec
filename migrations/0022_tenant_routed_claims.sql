-- Ends a batch of jobs and claims due ones, as ctxd_finish_and_claim (migration 0006)
-- does, with every statement inside on one tenant's rows: each end names its job's
-- tenant (p_tenants), and a claim first finds the tenant of the most urgent due job,
-- then locks that tenant's most urgent one with FOR UPDATE SKIP LOCKED. On a database
-- distributed by tenant each statement then runs on the one node holding the tenant
-- (docs/decisions/0028-citus-distribution.md). It claims the jobs the old function did,
-- in the same order, but while another worker's claim of the most urgent due job has
-- not committed: then this call takes that tenant's next one, before a more urgent job
-- of another tenant. A tenant whose due jobs are all being claimed by another worker is
-- passed over for the rest of the call. Each job is still claimed once. A claimed job
-- comes with its session's name.
create function ctxd_end_and_claim(
    p_ids bigint[], p_tenants bigint[], p_workers text[], p_states text[],
    p_results text[], p_errors text[], p_delays float8[], p_takers text[],
    p_lease float8, p_channel text)
returns table (held bigint, job jobs, external_id text)
language plpgsql as $$
declare
    i int;
    announce boolean;
    next_tenant bigint;
    next_id bigint;
    passed bigint[] := '{}';
begin
    perform set_config('synchronous_commit', 'off', true);
    for i in 1 .. coalesce(array_length(p_ids, 1), 0) loop
        update jobs j set
            state = case when p_states[i] = 'retryable' and j.attempts >= j.max_attempts
                then 'discarded' else p_states[i] end,
            result = coalesce(p_results[i]::jsonb, j.result),
            last_error = coalesce(p_errors[i], j.last_error),
            run_at = case when p_states[i] = 'retryable'
                then now() + make_interval(secs => p_delays[i]) else j.run_at end,
            locked_by = null, lease_until = null,
            finished_at = case when p_states[i] = 'retryable' and j.attempts < j.max_attempts
                then null else now() end
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
        update jobs j set state = 'running', attempts = j.attempts + 1,
            locked_by = p_takers[i], lease_until = now() + make_interval(secs => p_lease)
        where j.id = next_id and j.tenant_id = next_tenant
        returning * into job;
        select s.external_id into external_id from sessions s
        where s.id = (job).session_id and s.tenant_id = next_tenant;
        return next;
        i := i + 1;
    end loop;
end
$$;
