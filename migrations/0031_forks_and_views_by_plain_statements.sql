-- A fork's creation and a change of view states (a compaction's, a revert's), as
-- sql/forks/create.sql, sql/forks/set_view_states.sql and sql/revert/restore.sql did in
-- one statement each whose common table expressions inserted rows (a distributed
-- database plans that in parts: migration 0024, docs/decisions/0028-citus-distribution.md).
-- Plain statements on the tenant, in the caller's transaction, which holds the
-- session's row lock (and its dependants'): rows copied from one table of the tenant to
-- another by an insert of a select of the same tenant, rows given as arrays inserted
-- one by one.

-- Sets the view state and tokens of each seq (p_seqs, p_states, p_tokens) for session
-- p_session, whose seqs up to p_inherited are inherited: an inherited seq's state goes
-- to the session's overlay; one of its own rows is rewritten only after its current
-- state is copied to the overlay of every session in p_dependants (locked by the
-- caller) that reads the row and has no state of its own for it yet, so what they see
-- does not change. Returns the seqs written, in order.
create function ctxd_set_view_states(
    p_session bigint, p_tenant bigint, p_seqs bigint[], p_states smallint[],
    p_tokens int[], p_inherited bigint, p_dependants bigint[])
returns bigint[]
language plpgsql as $$
declare
    k int;
    state smallint;
    tokens int;
    written bigint[] := '{}';
begin
    if cardinality(p_dependants) > 0 then
        insert into message_views (session_id, seq, view_state, view_tokens, tenant_id)
        select l.session_id, m.seq, m.view_state, m.view_tokens, m.tenant_id
        from session_lineage l
        join messages m on m.tenant_id = l.tenant_id and m.session_id = l.ancestor_id
            and m.seq between l.first_seq and l.last_seq
        where l.ancestor_id = p_session and l.tenant_id = p_tenant
          and l.session_id = any(p_dependants) and m.seq = any(p_seqs)
          and m.seq > p_inherited
        on conflict (session_id, seq, tenant_id) do nothing;
    end if;
    for k in 1 .. coalesce(cardinality(p_seqs), 0) loop
        if p_seqs[k] > p_inherited then
            -- Elements read into variables first: Citus 13.2's coordinator crashes
            -- deparsing an array subscript in an update's target list (ctxd_last).
            state := p_states[k];
            tokens := p_tokens[k];
            update messages set view_state = state, view_tokens = tokens
            where session_id = p_session and tenant_id = p_tenant and seq = p_seqs[k];
            if not found then
                continue;
            end if;
        else
            insert into message_views (session_id, seq, view_state, view_tokens,
                tenant_id)
            values (p_session, p_seqs[k], p_states[k], p_tokens[k], p_tenant)
            on conflict (session_id, seq, tenant_id) do update
                set view_state = excluded.view_state,
                    view_tokens = excluded.view_tokens;
        end if;
        written := written || p_seqs[k];
    end loop;
    return array(select x from unnest(written) x order by x);
end $$;

-- Gives back to session p_session the view state and tokens each message had before
-- the oldest of the compactions p_compactions that touched it (ctxd_set_view_states's
-- arguments otherwise). Returns the seqs restored, in order.
create function ctxd_restore_views(
    p_session bigint, p_tenant bigint, p_compactions bigint[], p_inherited bigint,
    p_dependants bigint[])
returns bigint[]
language plpgsql as $$
declare
    seqs bigint[];
    states smallint[];
    tokens int[];
begin
    select coalesce(array_agg(c.seq order by c.seq), '{}'),
        coalesce(array_agg(c.state order by c.seq), '{}'),
        coalesce(array_agg(c.tokens order by c.seq), '{}')
    into seqs, states, tokens
    from (
        select distinct on (p.seq) p.seq, p.state, p.tokens
        from compactions k,
            unnest(k.seqs, k.prior_states, k.prior_tokens) as p(seq, state, tokens)
        where k.session_id = p_session and k.tenant_id = p_tenant
          and k.id = any(p_compactions)
        order by p.seq, k.id) c;
    return ctxd_set_view_states(p_session, p_tenant, seqs, states, tokens, p_inherited,
        p_dependants);
end $$;

-- A fork of session p_source at seq p_at: the session row (its aggregates decided by
-- the engine: p_counts is turn_count, log_tokens, content_bytes, view_tokens,
-- last_turn_tokens, view_first_seq, summary_tokens), its lineage (the source's, each
-- range cut at p_at, one level deeper, then the source itself from past its base
-- p_source_base with the summaries it has written so far, the newest's id as the
-- limit), the summaries it reuses, the source's own view states up to p_at and the
-- states given back (p_seqs, p_states, p_tokens), and SESSION_FORKED (p_kind,
-- p_detail) as the fork's first event and the source's next, announced on p_channel.
-- Nothing per shared message is copied. Of the task ledger, the client's todos and
-- notes are copied as they stand (their seqs after p_at left out); the entries taken
-- from the shared traffic are not (a row per file, command and error: copying them made
-- a fork of 2 000 messages write 1.2 MB). A taken name is a unique violation.
create function ctxd_create_fork(
    p_tenant bigint, p_external_id text, p_policy jsonb, p_metadata jsonb,
    p_source_name text, p_source bigint, p_at bigint, p_source_base bigint,
    p_counts bigint[], p_summaries bigint[], p_seqs bigint[], p_states smallint[],
    p_tokens int[], p_kind smallint, p_detail jsonb, p_channel text,
    p_budget smallint)
returns setof sessions
language plpgsql as $$
declare
    f sessions;
    entry record;
    kept bigint[];
    src record;
    limit_id bigint;
    k int;
    event_id bigint;
begin
    insert into sessions (tenant_id, external_id, policy, metadata, forked_from,
        base_seq, base_bytes, message_count, turn_count, log_tokens, content_bytes,
        view_tokens, last_turn_tokens, view_first_seq, summary_tokens, event_seq,
        budget_status)
    values (p_tenant, p_external_id, p_policy, p_metadata, p_source_name, p_at,
        p_counts[3], p_at, p_counts[1], p_counts[2], p_counts[3], p_counts[4],
        p_counts[5], p_counts[6], p_counts[7], 1, p_budget)
    returning * into f;
    if p_at > 0 then
        insert into session_lineage (session_id, ancestor_id, depth, first_seq,
            last_seq, summary_limit, tenant_id)
        select f.id, l.ancestor_id, l.depth + 1, l.first_seq, least(l.last_seq, p_at),
            l.summary_limit, l.tenant_id
        from session_lineage l where l.session_id = p_source and l.tenant_id = p_tenant;
        select coalesce(max(su.id), 0) into limit_id from summaries su
        where su.session_id = p_source and su.tenant_id = p_tenant;
        insert into session_lineage (session_id, ancestor_id, depth, first_seq,
            last_seq, summary_limit, tenant_id)
        values (f.id, p_source, 1, p_source_base + 1, p_at, limit_id, p_tenant);
    end if;
    for k in 1 .. coalesce(cardinality(p_summaries), 0) loop
        insert into summary_links (session_id, summary_id, tenant_id)
        values (f.id, p_summaries[k], p_tenant);
    end loop;
    insert into message_views (session_id, seq, view_state, view_tokens, tenant_id)
    select f.id, v.seq, v.view_state, v.view_tokens, v.tenant_id from message_views v
    where v.session_id = p_source and v.tenant_id = p_tenant and v.seq <= p_at
      and v.seq <> all(p_seqs);
    for k in 1 .. coalesce(cardinality(p_seqs), 0) loop
        insert into message_views (session_id, seq, view_state, view_tokens, tenant_id)
        values (f.id, p_seqs[k], p_states[k], p_tokens[k], p_tenant);
    end loop;
    -- One by one, in their order (an insert of a select with a subquery per row a
    -- distributed database would plan through the coordinator).
    for entry in select l.kind, l.key, l.text, l.seqs, l.status from ledger_entries l
        where l.session_id = p_source and l.tenant_id = p_tenant and l.kind in (4, 5)
        order by l.id
    loop
        kept := array(select x from unnest(entry.seqs) x where x <= p_at order by x);
        insert into ledger_entries (session_id, kind, key, text, seqs, status, tenant_id)
        values (f.id, entry.kind, entry.key, entry.text, kept, entry.status, p_tenant);
    end loop;
    update sessions set event_seq = event_seq + 1
    where id = p_source and tenant_id = p_tenant
    returning external_id, event_seq, version into src;
    insert into events (tenant_id, session_id, external_id, session_seq, kind,
        session_version, detail)
    values (p_tenant, f.id, f.external_id, 1, p_kind, f.version, p_detail);
    insert into events (tenant_id, session_id, external_id, session_seq, kind,
        session_version, detail)
    values (p_tenant, p_source, src.external_id, src.event_seq, p_kind, src.version,
        p_detail)
    returning id into event_id;
    perform pg_notify(p_channel, event_id::text);
    return next f;
end $$;
