-- The unfinished jobs, for the queue gauges: counts by state, the claimable ones (due
-- now) and how long the longest-waiting of those has been due. Only unfinished rows
-- are read (the jobs_pending partial index covers exactly them); finished jobs, kept
-- for the retention time, are not.
select
    count(*) filter (where state = 'available') as available,
    count(*) filter (where state = 'running') as running,
    count(*) filter (where state = 'retryable') as retryable,
    count(*) filter (where state in ('available', 'retryable') and run_at <= now()) as due,
    coalesce(extract(epoch from now() - min(run_at)
        filter (where state in ('available', 'retryable') and run_at <= now())), 0)::float8
        as oldest_due_secs
from jobs
where state in ('available', 'running', 'retryable')
