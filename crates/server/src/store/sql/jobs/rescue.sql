-- Rescues one running job whose lease lapsed (its worker died or stalled), in the
-- transaction that holds its session's lock and writes the attempt's COMPACTION_FAILED
-- event. Fenced on state and lease: a rescue running at the same time in another
-- replica waits for this row, then finds it no longer running and changes nothing, so
-- each rescued attempt is counted and announced once. $1: the job, $2: the error, $3:
-- the job's tenant.
--
-- An attempt before the last: retryable at once (the attempt stays counted).
-- The last attempt: due again as its fallback run (`fallback`), which the claim counts
-- as that same attempt again; the worker taking it applies the deterministic fallback
-- and ends the job as any exhausted job ends (its event, the budget status).
-- A fallback run whose worker stopped too: discarded.
-- (The time is read once in `lapsed`: a distributed database takes no function that is
-- not immutable inside a CASE of an update.)
with lapsed as (
    select id, attempts, max_attempts, fallback, now() as at from jobs
    where id = $1 and tenant_id = $3 and state = 'running' and lease_until < now()
    for update
)
update jobs j set
    state = case when l.fallback then 'discarded' else 'retryable' end,
    attempts = case when l.attempts >= l.max_attempts and not l.fallback
        then l.attempts - 1 else l.attempts end,
    fallback = l.fallback or l.attempts >= l.max_attempts,
    last_error = $2,
    locked_by = null, lease_until = null, run_at = l.at,
    finished_at = case when l.fallback then l.at end
from lapsed l
where j.id = l.id and j.tenant_id = $3
returning l.attempts as attempt,
    -- The attempt's end is its fallback run's (which writes the event).
    (j.fallback and not l.fallback) as fallback_run,
    l.fallback as discarded,
    j.notify_done
