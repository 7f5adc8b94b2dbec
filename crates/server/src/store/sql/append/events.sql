-- The events, numbered from the session's per-session seq.
inserted_events as (
    insert into events (tenant_id, session_id, external_id, session_seq, kind,
        session_version, detail)
    select s.tenant_id, $1, s.external_id, s.event_base + e.ord, e.kind, s.version, e.detail
    from s, unnest($41::smallint[], $42::jsonb[]) with ordinality as e(kind, detail, ord)
    returning id
)
