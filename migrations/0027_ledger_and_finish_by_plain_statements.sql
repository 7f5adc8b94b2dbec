-- UpdateLedger's write and FinishSession's, as sql/ledger/update.sql and
-- sql/tree/finish.sql did in one statement each whose common table expressions
-- inserted rows (a distributed database plans that in parts: migration 0024,
-- docs/decisions/0028-citus-distribution.md). Plain statements on the tenant, in the
-- caller's transaction, which holds the session's row lock (FinishSession: the child's,
-- and the parent's after appending the answer there).

-- Todos and notes inserted or replaced (a seq of 0: the session had no message yet),
-- removed notes deleted. An entry is either upserted or removed (the engine's plan).
create function ctxd_update_ledger(
    p_session bigint, p_tenant bigint, p_kinds smallint[], p_keys text[],
    p_texts text[], p_seqs bigint[], p_statuses smallint[], p_removed text[])
returns void
language plpgsql as $$
declare
    i int;
begin
    for i in 1 .. coalesce(cardinality(p_kinds), 0) loop
        insert into ledger_entries as l (session_id, kind, key, text, seqs, status,
            tenant_id)
        values (p_session, p_kinds[i], p_keys[i], p_texts[i],
            case when p_seqs[i] > 0 then array[p_seqs[i]] else '{}'::bigint[] end,
            p_statuses[i], p_tenant)
        on conflict (session_id, kind, key, tenant_id) do update set
            text = excluded.text,
            seqs = case when excluded.seqs = '{}' or excluded.seqs <@ l.seqs then l.seqs
                else ctxd_ledger_seqs(l.seqs || excluded.seqs) end,
            -- Done is terminal, whatever the request (the engine decided so too).
            status = case when l.status = 3 then 3::smallint else excluded.status end,
            updated_at = excluded.updated_at;
    end loop;
    delete from ledger_entries
    where session_id = p_session and tenant_id = p_tenant and kind = 5
      and key = any(p_removed);
end $$;

-- The child finished at a new version, with SESSION_FINISHED (p_kind, p_detail) on it
-- and, while it exists, on its parent (p_parent; null: none), announced on p_channel.
-- Returns the child's new version (null when it was already finished: nothing written)
-- and how many events were written.
create function ctxd_finish_child(
    p_child bigint, p_parent bigint, p_tenant bigint, p_kind smallint, p_detail jsonb,
    p_channel text)
returns table (version bigint, events bigint)
language plpgsql as $$
#variable_conflict use_column
declare
    child record;
    parent record;
    event_id bigint;
    written bigint := 1;
begin
    update sessions set finished_at = now(), version = version + 1, updated_at = now(),
        event_seq = event_seq + 1
    where id = p_child and tenant_id = p_tenant and finished_at is null
    returning external_id, event_seq, version into child;
    if not found then
        return query select null::bigint, 0::bigint;
        return;
    end if;
    insert into events (tenant_id, session_id, external_id, session_seq, kind,
        session_version, detail)
    values (p_tenant, p_child, child.external_id, child.event_seq, p_kind, child.version,
        p_detail)
    returning id into event_id;
    if p_parent is not null then
        update sessions set event_seq = event_seq + 1
        where id = p_parent and tenant_id = p_tenant
        returning external_id, event_seq, version into parent;
        if found then
            insert into events (tenant_id, session_id, external_id, session_seq, kind,
                session_version, detail)
            values (p_tenant, p_parent, parent.external_id, parent.event_seq, p_kind,
                parent.version, p_detail)
            returning id into event_id;
            written := 2;
        end if;
    end if;
    perform pg_notify(p_channel, event_id::text);
    return query select child.version, written;
end $$;
