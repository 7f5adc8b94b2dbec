-- Ends a batch of jobs and claims due ones for a list of workers, in one call: under
-- load one commit serves many jobs (see docs/decisions/0003-jobs.md). Each statement
-- inside is simple, so PostgreSQL keeps its plan; the same work as one SQL statement was
-- planned anew on every execution.
--
-- Rows: one per recorded end (held = the job id, job null), then one per claimed job
-- (held null, job = the row as claimed). An end is recorded only if its worker still holds
-- the job; a job a waiter asked about is announced on p_channel.
-- The queue's bookkeeping commits asynchronously: a crash of PostgreSQL can only revert
-- it, which runs a job again; its effect is guarded by the session's state.
create function ctxd_finish_and_claim(
    p_ids bigint[], p_workers text[], p_states text[], p_results text[], p_errors text[],
    p_delays float8[], p_takers text[], p_lease float8, p_channel text)
returns table (held bigint, job jobs)
language plpgsql as $$
declare
    i int;
    announce boolean;
    next_id bigint;
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
        where j.id = p_ids[i] and j.locked_by = p_workers[i] and j.state = 'running'
        returning j.notify_done and j.state in ('completed', 'discarded', 'cancelled')
            into announce;
        if found then
            held := p_ids[i];
            job := null;
            return next;
            if announce then
                perform pg_notify(p_channel, p_ids[i]::text);
            end if;
        end if;
    end loop;
    for i in 1 .. coalesce(array_length(p_takers, 1), 0) loop
        select id into next_id from jobs
        where state in ('available', 'retryable') and run_at <= now()
        order by priority desc, run_at, id
        limit 1
        for update skip locked;
        exit when next_id is null;
        held := null;
        update jobs set state = 'running', attempts = attempts + 1, locked_by = p_takers[i],
            lease_until = now() + make_interval(secs => p_lease)
        where id = next_id
        returning * into job;
        return next;
    end loop;
end
$$;
