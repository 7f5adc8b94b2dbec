-- A session's deletion with its SESSION_DELETED event, as sql/forks/delete.sql and
-- sql/forks/hide.sql did in one statement each whose common table expression inserted
-- the event (a distributed database plans that in parts: migration 0024,
-- docs/decisions/0028-citus-distribution.md). Plain statements on the tenant, the
-- session locked by the caller; the event announced on p_channel. Each returns the
-- session's message count (null when no such session).

-- Deletes the session with its whole log (no fork reads it).
create function ctxd_delete_session(
    p_session bigint, p_tenant bigint, p_kind smallint, p_detail jsonb, p_channel text)
returns bigint
language plpgsql as $$
declare
    s record;
    event_id bigint;
begin
    delete from sessions where id = p_session and tenant_id = p_tenant
    returning external_id, event_seq, version, message_count into s;
    if not found then
        return null;
    end if;
    insert into events (tenant_id, session_id, external_id, session_seq, kind,
        session_version, detail)
    values (p_tenant, p_session, s.external_id, s.event_seq + 1, p_kind, s.version + 1,
        p_detail)
    returning id into event_id;
    perform pg_notify(p_channel, event_id::text);
    return s.message_count;
end $$;

-- Deletes a session that forks still read: renamed out of the id space (no client id
-- starts with '#'), marked deleted, its waiting jobs cancelled, its event written under
-- the name it had (p_name). Its rows stay until no fork reads them.
create function ctxd_hide_session(
    p_session bigint, p_tenant bigint, p_name text, p_kind smallint, p_detail jsonb,
    p_channel text)
returns bigint
language plpgsql as $$
declare
    s record;
    event_id bigint;
begin
    update sessions set external_id = '#' || id, deleted_at = now(),
        version = version + 1, event_seq = event_seq + 1, updated_at = now()
    where id = p_session and tenant_id = p_tenant
    returning event_seq, version, message_count into s;
    if not found then
        return null;
    end if;
    update jobs set state = 'cancelled', finished_at = now()
    where session_id = p_session and tenant_id = p_tenant
      and state in ('available', 'retryable');
    insert into events (tenant_id, session_id, external_id, session_seq, kind,
        session_version, detail)
    values (p_tenant, p_session, p_name, s.event_seq, p_kind, s.version, p_detail)
    returning id into event_id;
    perform pg_notify(p_channel, event_id::text);
    return s.message_count;
end $$;
