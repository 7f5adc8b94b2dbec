-- AppendTurn's write (store::batch::statement), single or batched, as sql/append/*.sql
-- did in one statement whose common table expressions updated the session rows and
-- inserted messages, calls, events, jobs and ledger rows selected from arrays (a
-- distributed database plans that in parts and commits it in two phases even on one
-- node: migration 0024, docs/decisions/0028-citus-distribution.md). Here every
-- statement is a plain one on an append's tenant, rows inserted one by one, so on a
-- database distributed by tenant all of an append runs on the node holding its tenant;
-- on one PostgreSQL a batch is still one round trip and one commit.
--
-- p_items: one JSON object per append (store::batch::statement::ItemParameter), in
-- session order; its messages are rows first_row .. first_row + rows - 1 of the p_*
-- message arrays. Each append applies only if its session row is as its append read it
-- (row_version, its xmin) and, for an assumed state (the replica's cached row, nothing
-- read), its version, build count and tool-call references still hold; with a pending
-- job it relied on, only if that job is still the pending one of its kind. p_wait:
-- wait for a row another transaction holds (an append alone) rather than report it
-- not locked (a batch: that append is written alone). One row per append: whether its
-- row was locked and the write applied, the row as the write left it with its xmin,
-- the job it enqueued, and — not applied, relying on a pending job — what it saw.
create function ctxd_append(
    p_wait boolean, p_items jsonb,
    p_seqs bigint[], p_turns bigint[], p_roles smallint[], p_contents text[],
    p_parts text[], p_reasonings text[], p_tool_calls text[], p_tool_call_ids text[],
    p_names text[], p_metadata text[], p_pinned boolean[], p_token_counts int[],
    p_view_tokens int[], p_view_states smallint[],
    p_events_channel text, p_jobs_channel text)
returns table (item int, locked boolean, applied boolean, session sessions,
    row_version text, job_id bigint, row_version_now text, pending_now bigint)
language plpgsql as $$
#variable_conflict use_column
declare
    b record;
    w record;
    k int;
    event_id bigint;
    last_event bigint;
    announce_jobs boolean := false;
begin
    for b in select * from jsonb_to_recordset(p_items) as x(
        item int, session bigint, tenant bigint, row_version text, assumed boolean,
        builds bigint, version bigint, message_count bigint, turn_count bigint,
        log_tokens bigint, view_tokens bigint, last_turn_tokens bigint,
        content_bytes bigint, anchor_reported bigint, anchor_fixed bigint,
        anchor_history bigint, anchor_first_seq bigint, anchor_last_seq bigint,
        anchor_view_epoch bigint, anchor_delta_ratio float8, error float8,
        usage_input bigint, usage_output bigint, usage_cached bigint, evicted bigint,
        lifts_pause boolean, budget smallint, pending_kind text, pending_job bigint,
        fork boolean, first_row int, rows int, call_ids text[], call_seqs bigint[],
        call_results bigint[], answer_ids text[], answer_seqs bigint[],
        event_kinds smallint[], event_details jsonb, job jsonb, idempotency jsonb,
        ledger jsonb, runs jsonb)
    loop
        item := b.item;
        locked := true;
        applied := false;
        session := null;
        row_version := null;
        job_id := null;
        row_version_now := null;
        pending_now := null;
        if not p_wait then
            perform 1 from sessions
            where id = b.session and tenant_id = b.tenant for update skip locked;
            if not found then
                locked := false;
                return next;
                continue;
            end if;
        end if;
        update sessions set
            version = b.version, message_count = b.message_count,
            turn_count = b.turn_count, log_tokens = b.log_tokens,
            content_bytes = b.content_bytes, view_tokens = b.view_tokens,
            last_turn_tokens = b.last_turn_tokens, updated_at = now(),
            anchor_reported_tokens = coalesce(b.anchor_reported, anchor_reported_tokens),
            anchor_fixed_tokens = coalesce(b.anchor_fixed, anchor_fixed_tokens),
            anchor_history_tokens = coalesce(b.anchor_history, anchor_history_tokens),
            anchor_first_seq = coalesce(b.anchor_first_seq, anchor_first_seq),
            anchor_last_seq = coalesce(b.anchor_last_seq, anchor_last_seq),
            anchor_view_epoch = coalesce(b.anchor_view_epoch, anchor_view_epoch),
            anchor_delta_ratio = coalesce(b.anchor_delta_ratio, anchor_delta_ratio),
            est_samples = est_samples + case when b.error is null then 0 else 1 end,
            est_abs_err_sum = est_abs_err_sum + coalesce(abs(b.error), 0),
            est_max_abs_err = greatest(est_max_abs_err, coalesce(abs(b.error), 0)),
            est_last_err = coalesce(b.error, est_last_err),
            usage_input_tokens = usage_input_tokens + b.usage_input,
            usage_output_tokens = usage_output_tokens + b.usage_output,
            usage_cached_tokens = usage_cached_tokens + b.usage_cached,
            evicted_messages = evicted_messages + b.evicted,
            -- A new user message lifts the loop guard's pause.
            compaction_failures = case when b.lifts_pause then 0 else compaction_failures end,
            event_seq = event_seq + cardinality(b.event_kinds),
            budget_status = coalesce(b.budget, budget_status)
        where id = b.session and tenant_id = b.tenant and xmin::text = b.row_version
            -- An assumed state: the version one past the cached row's and the count of
            -- recorded builds match too (a transaction id reused after the database lost
            -- the transaction that made it), none of the new calls exists yet, and every
            -- call answered exists unanswered.
            and (not b.assumed or (
                version = b.version - 1 and builds = b.builds
                and not exists (
                    select 1 from tool_calls t where t.session_id = b.session
                        and t.tenant_id = b.tenant and t.call_id = any(b.call_ids))
                and (select count(*) from tool_calls t
                     where t.session_id = b.session and t.tenant_id = b.tenant
                       and t.call_id = any(b.answer_ids) and t.result_seq is null)
                    = coalesce(cardinality(b.answer_ids), 0)))
            -- The pending job the append relied on is still the pending one.
            and (b.pending_kind is null
                or (select j.id from jobs j
                    where j.session_id = b.session and j.tenant_id = b.tenant
                      and j.kind = b.pending_kind
                      and j.state in ('available', 'running', 'retryable'))
                    is not distinct from b.pending_job)
        returning sessions as row, xmin::text as version,
            event_seq - cardinality(b.event_kinds) as event_base
        into w;
        if not found then
            if b.pending_kind is not null then
                select xmin::text into row_version_now from sessions
                where id = b.session and tenant_id = b.tenant;
                select j.id into pending_now from jobs j
                where j.session_id = b.session and j.tenant_id = b.tenant
                  and j.kind = b.pending_kind
                  and j.state in ('available', 'running', 'retryable');
            end if;
            return next;
            continue;
        end if;
        applied := true;
        session := w.row;
        row_version := w.version;
        for k in b.first_row .. b.first_row + b.rows - 1 loop
            insert into messages (session_id, seq, turn, role, content, parts, reasoning,
                tool_calls, tool_call_id, name, metadata, pinned, token_count,
                view_tokens, view_state, tenant_id)
            values (b.session, p_seqs[k], p_turns[k], p_roles[k], p_contents[k],
                p_parts[k]::jsonb, p_reasonings[k], p_tool_calls[k]::jsonb,
                p_tool_call_ids[k], p_names[k], p_metadata[k]::jsonb, p_pinned[k],
                p_token_counts[k], p_view_tokens[k], p_view_states[k], b.tenant);
        end loop;
        if cardinality(b.call_ids) + cardinality(b.answer_ids) > 0 then
            perform ctxd_append_calls(b.session, b.tenant, b.fork, b.call_ids,
                b.call_seqs, b.call_results, b.answer_ids, b.answer_seqs);
        end if;
        if jsonb_array_length(b.ledger) + jsonb_array_length(b.runs) > 0 then
            perform ctxd_append_ledger(b.session, b.tenant, b.ledger, b.runs);
        end if;
        if b.job is not null then
            job_id := ctxd_append_job(b.session, b.tenant, b.job);
            announce_jobs := announce_jobs
                or (job_id is not null and (b.job ->> 'announce')::boolean);
        end if;
        if b.idempotency is not null then
            insert into idempotency_keys (session_id, key, request_hash, response,
                tenant_id)
            values (b.session, b.idempotency ->> 'key',
                decode(b.idempotency ->> 'hash', 'hex'),
                case when job_id is null then b.idempotency -> 'response'
                    else jsonb_set(b.idempotency -> 'response', '{summarization_job_id}',
                        to_jsonb(job_id)) end,
                b.tenant);
        end if;
        for k in 1 .. cardinality(b.event_kinds) loop
            insert into events (tenant_id, session_id, external_id, session_seq, kind,
                session_version, detail)
            values (b.tenant, b.session, (w.row).external_id, w.event_base + k,
                b.event_kinds[k], (w.row).version, b.event_details -> (k - 1))
            returning id into event_id;
            last_event := event_id;
        end loop;
        return next;
    end loop;
    if last_event is not null then
        perform pg_notify(p_events_channel, last_event::text);
    end if;
    if announce_jobs then
        perform pg_notify(p_jobs_channel, '');
    end if;
end $$;

-- An append's tool calls: those it makes (with the seq of their result when it answers
-- them too), and its answers to calls of earlier appends. A fork's answer to a call it
-- inherited inserts a row of its own (the ancestor's row stays the ancestor's).
create function ctxd_append_calls(
    p_session bigint, p_tenant bigint, p_fork boolean, p_call_ids text[],
    p_call_seqs bigint[], p_call_results bigint[], p_answer_ids text[],
    p_answer_seqs bigint[])
returns void
language plpgsql as $$
declare
    k int;
    call_seq bigint;
    answer_seq bigint;
begin
    for k in 1 .. coalesce(cardinality(p_call_ids), 0) loop
        insert into tool_calls (session_id, call_id, call_seq, result_seq, tenant_id)
        values (p_session, p_call_ids[k], p_call_seqs[k], p_call_results[k], p_tenant);
    end loop;
    for k in 1 .. coalesce(cardinality(p_answer_ids), 0) loop
        -- An element read into a variable first: Citus 13.2's coordinator crashes
        -- deparsing an array subscript in an update's target list (ctxd_last).
        answer_seq := p_answer_seqs[k];
        if not p_fork then
            update tool_calls set result_seq = answer_seq
            where session_id = p_session and tenant_id = p_tenant
              and call_id = p_answer_ids[k];
            continue;
        end if;
        -- The seq of the message making the call: the fork's own row's, or the
        -- nearest ancestor's within the range the fork inherits of it.
        select t.call_seq into call_seq from tool_calls t
        where t.session_id = p_session and t.tenant_id = p_tenant
          and t.call_id = p_answer_ids[k];
        if call_seq is null then
            select t.call_seq into call_seq from session_lineage l
            join tool_calls t on t.session_id = l.ancestor_id and t.tenant_id = l.tenant_id
                and t.call_id = p_answer_ids[k]
            where l.session_id = p_session and l.tenant_id = p_tenant
              and t.call_seq <= l.last_seq
            order by l.depth limit 1;
        end if;
        insert into tool_calls (session_id, call_id, call_seq, result_seq, tenant_id)
        values (p_session, p_answer_ids[k], call_seq, answer_seq, p_tenant)
        on conflict (session_id, call_id, tenant_id)
            do update set result_seq = excluded.result_seq;
    end loop;
end $$;

-- The last p_count elements of p_items. (Citus 13.2's coordinator crashes deparsing an
-- array slice in an update's target list, ruleutils_15.c:5433; a call of a function it
-- cannot inline, PL/pgSQL, it sends as it is.)
create function ctxd_last(p_items anyarray, p_count int)
returns anyarray
language plpgsql immutable as $$
begin
    return p_items[greatest(1, cardinality(p_items) - p_count + 1):];
end $$;

-- The task ledger's rows an append yields (p_entries: one object per (kind, key),
-- merged by the engine) merged into the session's, then the exit statuses its results
-- show for commands of earlier appends (p_runs), except on the entries just merged
-- (those carry their runs already).
create function ctxd_append_ledger(
    p_session bigint, p_tenant bigint, p_entries jsonb, p_runs jsonb)
returns void
language plpgsql as $$
declare
    e record;
    r record;
    merged text[] := '{}';
begin
    for e in select * from jsonb_to_recordset(coalesce(p_entries, '[]')) as x(
        kind smallint, key text, text text, seqs bigint[], run_seqs bigint[],
        run_codes int[], call_id text)
    loop
        insert into ledger_entries as l (session_id, kind, key, text, seqs, run_seqs,
            run_codes, call_id, tenant_id)
        values (p_session, e.kind, e.key, e.text, e.seqs, e.run_seqs, e.run_codes,
            e.call_id, p_tenant)
        on conflict (session_id, kind, key, tenant_id) do update set
            text = excluded.text,
            seqs = ctxd_ledger_seqs(l.seqs || excluded.seqs),
            run_seqs = ctxd_last(l.run_seqs || excluded.run_seqs, 8),
            run_codes = ctxd_last(l.run_codes || excluded.run_codes, 8),
            call_id = coalesce(excluded.call_id, l.call_id),
            -- The insert's default, now(): a distributed database takes no function
            -- in DO UPDATE that is not immutable.
            updated_at = excluded.updated_at;
        if e.kind = 2 then
            merged := merged || e.key;
        end if;
    end loop;
    for r in select * from jsonb_to_recordset(coalesce(p_runs, '[]')) as x(
        call_id text, seq bigint, exit_code int)
    loop
        update ledger_entries l set
            seqs = ctxd_ledger_seqs(l.seqs || r.seq),
            run_seqs = ctxd_last(l.run_seqs || r.seq, 8),
            run_codes = ctxd_last(l.run_codes || r.exit_code, 8),
            updated_at = now()
        where l.session_id = p_session and l.tenant_id = p_tenant and l.kind = 2
          and l.call_id = r.call_id and l.key <> all(merged);
    end loop;
end $$;

-- An append's summarization job (p_job: kind, args, priority, max_attempts,
-- notify_done), unless one of its kind is pending: its id, or null. Not
-- ctxd_enqueue_job (0025): that one touches the session row after a new job, which the
-- append has just updated, and reports a pending job's id, which the append must not.
create function ctxd_append_job(p_session bigint, p_tenant bigint, p_job jsonb)
returns bigint
language plpgsql as $$
declare
    new_id bigint;
begin
    insert into jobs (tenant_id, session_id, kind, args, priority, max_attempts,
        notify_done)
    values (p_tenant, p_session, p_job ->> 'kind', p_job -> 'args',
        (p_job ->> 'priority')::smallint, (p_job ->> 'max_attempts')::int,
        (p_job ->> 'notify_done')::boolean)
    on conflict (session_id, kind, tenant_id)
        where state in ('available', 'running', 'retryable')
    do nothing
    returning id into new_id;
    return new_id;
end $$;
