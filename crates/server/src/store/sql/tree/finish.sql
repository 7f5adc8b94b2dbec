-- FinishSession: the child ($1, of tenant $6) finished at a new version, with SESSION_FINISHED ($3,
-- $4) on it and, while it exists, on its parent ($2; null: none). Runs in the caller's
-- transaction, which holds the child's row lock (and the parent's, after appending the
-- answer there): child first, then parent, the order every two-session lock takes.
with child as (
    update sessions set finished_at = now(), version = version + 1, updated_at = now(),
        event_seq = event_seq + 1
    where id = $1 and tenant_id = $6 and finished_at is null
    returning tenant_id, id, external_id, event_seq, version
), parent as (
    update sessions p set event_seq = p.event_seq + 1
    from child
    where p.id = $2 and p.tenant_id = $6
    returning p.tenant_id, p.id, p.external_id, p.event_seq, p.version
), ins as (
    insert into events (tenant_id, session_id, external_id, session_seq, kind,
        session_version, detail)
    select tenant_id, id, external_id, event_seq, $3, version, $4 from child
    union all
    select tenant_id, id, external_id, event_seq, $3, version, $4 from parent
    returning id
)
select (select version from child) as version,
    (select count(*) from ins) as events,
    pg_notify($5, (select max(id) from ins)::text) as notified
