-- The batch's events, each numbered from its session's per-session seq (events.sql's,
-- per item; ord counts from 1 within an item). `$E…` are numbered when the statement is
-- put together.
batch_events as (
    insert into events (tenant_id, session_id, external_id, session_seq, kind,
        session_version, detail)
    select s.tenant_id, s.id, s.external_id, s.event_base + e.ord, e.kind, s.version,
        e.detail
    from unnest($E1::int[], $E2::bigint[], $E3::smallint[], $E4::jsonb[])
        as e(idx, ord, kind, detail)
    join s on s.b_idx = e.idx
    returning id
)