-- One AppendTurn's writes in one statement, its own transaction: the session's new
-- aggregates and anchor, applied only if the row is as the append read it ($40, its
-- xmin); and, only then (every other part reads `s`), the messages, the new tool calls
-- (answered ones carry their result seq, since a sub-statement cannot see rows another
-- one inserts), the answers to earlier calls, the response kept under the idempotency
-- key, the events (per-session seqs from the row), a summarization job unless one is
-- pending, and the NOTIFYs announcing them.
with s as (
    update sessions set
        version = $19, message_count = $20, turn_count = $21, log_tokens = $22,
        view_tokens = $23, last_turn_tokens = $24, updated_at = now(),
        anchor_reported_tokens = coalesce($25, anchor_reported_tokens),
        anchor_fixed_tokens = coalesce($26, anchor_fixed_tokens),
        anchor_history_tokens = coalesce($27, anchor_history_tokens),
        anchor_first_seq = coalesce($28, anchor_first_seq),
        anchor_last_seq = coalesce($29, anchor_last_seq),
        anchor_view_epoch = coalesce($30, anchor_view_epoch),
        anchor_delta_ratio = coalesce($35, anchor_delta_ratio),
        est_samples = est_samples + case when $31::float8 is null then 0 else 1 end,
        est_abs_err_sum = est_abs_err_sum + coalesce(abs($31::float8), 0),
        est_max_abs_err = greatest(est_max_abs_err, coalesce(abs($31::float8), 0)),
        est_last_err = coalesce($31::float8, est_last_err),
        usage_input_tokens = usage_input_tokens + $32,
        usage_output_tokens = usage_output_tokens + $33,
        usage_cached_tokens = usage_cached_tokens + $34,
        evicted_messages = evicted_messages + $38,
        -- A new user message lifts the loop guard's pause.
        compaction_failures = case when $39 then 0 else compaction_failures end,
        event_seq = event_seq + cardinality($41::smallint[]),
        budget_status = coalesce($43, budget_status)
    where id = $1 and xmin::text = $40
    returning tenant_id, external_id, version,
        event_seq - cardinality($41::smallint[]) as event_base
),
inserted_messages as (
    insert into messages (session_id, seq, turn, role, content, parts, reasoning,
        tool_calls, tool_call_id, name, metadata, pinned, token_count, view_tokens,
        view_state)
    select $1, m.seq, m.turn, m.role, m.content, m.parts::jsonb, m.reasoning,
        m.tool_calls::jsonb, m.tool_call_id, m.name, m.metadata::jsonb, m.pinned,
        m.token_count, m.view_tokens, m.view_state
    from s, unnest($2::bigint[], $3::bigint[], $4::smallint[], $5::text[], $6::text[],
        $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::bool[],
        $13::int[], $36::int[], $37::smallint[])
        as m(seq, turn, role, content, parts, reasoning, tool_calls, tool_call_id,
             name, metadata, pinned, token_count, view_tokens, view_state)
),
inserted_calls as (
    insert into tool_calls (session_id, call_id, call_seq, result_seq)
    select $1, c.id, c.call_seq, c.result_seq
    from s, unnest($14::text[], $15::bigint[], $16::bigint[]) as c(id, call_seq, result_seq)
),
answered_calls as (
    update tool_calls t set result_seq = a.seq
    from s, unnest($17::text[], $18::bigint[]) as a(id, seq)
    where t.session_id = $1 and t.call_id = a.id
),
enqueued as (
    insert into jobs (tenant_id, session_id, kind, args, priority, max_attempts, notify_done)
    select s.tenant_id, $1, $47, $48, $49, $50, $51
    from s where $47::text is not null
    on conflict (session_id, kind) where state in ('available', 'running', 'retryable')
        do nothing
    returning id
),
kept_response as (
    insert into idempotency_keys (session_id, key, request_hash, response)
    select $1, $44, $45,
        case when exists (select 1 from enqueued)
            then jsonb_set($46::jsonb, '{summarization_job_id}',
                           to_jsonb((select id from enqueued)))
            else $46::jsonb end
    from s where $44::text is not null
),
inserted_events as (
    insert into events (tenant_id, session_id, external_id, session_seq, kind,
        session_version, detail)
    select s.tenant_id, $1, s.external_id, s.event_base + e.ord, e.kind, s.version, e.detail
    from s, unnest($41::smallint[], $42::jsonb[]) with ordinality as e(kind, detail, ord)
    returning id
)
select exists (select 1 from s) as applied,
    (select id from enqueued) as job_id,
    case when exists (select 1 from inserted_events)
        then pg_notify($53, (select max(id) from inserted_events)::text) end as events_notified,
    case when $52 and exists (select 1 from enqueued)
        then pg_notify($54, '') end as jobs_notified
