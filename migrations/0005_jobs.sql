-- The job queue: summarization work that must not block a turn. A job is claimed with
-- FOR UPDATE SKIP LOCKED under a lease; a job whose worker died is claimed again once
-- its lease lapses. At most one job of a kind is pending per session.
--
--   available --claim--> running --> completed
--                           |  \----> retryable (run_at = now + backoff) --claim--> running
--                           |  \----> discarded (max attempts, or not retryable)
--                           \-------> cancelled (no longer wanted)
create table jobs (
    id              bigint generated always as identity primary key,
    tenant_id       bigint not null references tenants (id) on delete cascade,
    session_id      bigint not null references sessions (id) on delete cascade,
    kind            text not null,
    state           text not null default 'available'
        check (state in ('available', 'running', 'completed', 'retryable', 'discarded', 'cancelled')),
    -- Higher runs first.
    priority        smallint not null default 0,
    attempts        integer not null default 0,
    max_attempts    integer not null,
    run_at          timestamptz not null default now(),
    -- The worker holding a running job, and until when its claim holds.
    locked_by       text,
    lease_until     timestamptz,
    -- What to do (e.g. the target size), and what came of it.
    args            jsonb not null default '{}',
    result          jsonb,
    last_error      text,
    -- Announce the end of this job (someone is waiting on it).
    notify_done     boolean not null default false,
    created_at      timestamptz not null default now(),
    finished_at     timestamptz
);
-- At most one pending job per (session, kind): enqueueing again is a no-op.
create unique index jobs_pending on jobs (session_id, kind)
    where state in ('available', 'running', 'retryable');
-- The claim: due jobs by priority, then age.
create index jobs_due on jobs (priority desc, run_at, id)
    where state in ('available', 'retryable');
create index jobs_leases on jobs (lease_until) where state = 'running';
create index jobs_finished on jobs (finished_at)
    where state in ('completed', 'discarded', 'cancelled');
