-- Appends to several sessions in one statement (one commit), each applied only if its
-- session row is as its append read it (b_row_version, its xmin) or, for an assumed
-- state, as the replica's cached row says — the same guards as session.sql and
-- assumed.sql, per item. A session appears at most once per batch. Batched appends have
-- no idempotency key; those take the single statement. $55: the batch's tenants, which
-- every table read or written is filtered by (one, on a distributed database). The session update repeats
-- session.sql's per item, the events and jobs (the parts slot: batch_events.sql,
-- batch_jobs.sql, only when the batch has such rows) events.sql's and job.sql's, and
-- the task ledger's parts (the ledger slot: batch_ledger.sql, batch_ledger_runs.sql,
-- only when the batch has such rows) ledger.sql's: change both together
-- (replicas::batched_and_single_appends_write_the_same_rows compares what they write).
with b as (
    select * from unnest($1::int[], $2::bigint[], $3::text[], $4::bool[], $5::bigint[],
        $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[],
        $12::bigint[], $13::bigint[], $14::bigint[], $15::bigint[], $16::bigint[],
        $17::bigint[], $18::float8[], $19::float8[], $20::bigint[], $21::bigint[],
        $22::bigint[], $23::bigint[], $24::bool[], $25::bigint[], $48::bigint[],
        $51::text[], $52::bigint[], $53::bigint[], $54::smallint[])
    as b(b_idx, b_id, b_row_version, b_assumed, b_version, b_message_count, b_turn_count,
         b_log_tokens, b_view_tokens, b_last_turn_tokens, b_builds, b_anchor_reported,
         b_anchor_fixed, b_anchor_history, b_anchor_first_seq, b_anchor_last_seq,
         b_anchor_view_epoch, b_anchor_delta_ratio, b_error, b_usage_input,
         b_usage_output, b_usage_cached, b_evicted, b_user, b_answers, b_content_bytes,
         b_pending_kind, b_pending_job, b_events, b_budget_status)
),
-- New tool calls (c) and answers to earlier ones (a), by batch item.
c as (
    select * from unnest($40::int[], $41::text[], $42::bigint[], $43::bigint[])
    as c(idx, id, call_seq, result_seq)
),
a as (
    select * from unnest($44::int[], $45::text[], $46::bigint[]) as a(idx, id, seq)
),
-- The batch's session rows, locked in session order, skipping any another transaction
-- holds: an append whose row is locked is written alone (it waits for that lock by
-- itself, not the whole batch).
locked as (
    select id as locked_id from sessions
    where id = any($2::bigint[]) and tenant_id = any($55::bigint[])
    order by id for update skip locked
),
s as (
    update sessions set
        version = b_version, message_count = b_message_count, turn_count = b_turn_count,
        log_tokens = b_log_tokens, content_bytes = b_content_bytes,
        view_tokens = b_view_tokens,
        last_turn_tokens = b_last_turn_tokens, updated_at = now(),
        anchor_reported_tokens = coalesce(b_anchor_reported, anchor_reported_tokens),
        anchor_fixed_tokens = coalesce(b_anchor_fixed, anchor_fixed_tokens),
        anchor_history_tokens = coalesce(b_anchor_history, anchor_history_tokens),
        anchor_first_seq = coalesce(b_anchor_first_seq, anchor_first_seq),
        anchor_last_seq = coalesce(b_anchor_last_seq, anchor_last_seq),
        anchor_view_epoch = coalesce(b_anchor_view_epoch, anchor_view_epoch),
        anchor_delta_ratio = coalesce(b_anchor_delta_ratio, anchor_delta_ratio),
        est_samples = est_samples + case when b_error is null then 0 else 1 end,
        est_abs_err_sum = est_abs_err_sum + coalesce(abs(b_error), 0),
        est_max_abs_err = greatest(est_max_abs_err, coalesce(abs(b_error), 0)),
        est_last_err = coalesce(b_error, est_last_err),
        usage_input_tokens = usage_input_tokens + b_usage_input,
        usage_output_tokens = usage_output_tokens + b_usage_output,
        usage_cached_tokens = usage_cached_tokens + b_usage_cached,
        evicted_messages = evicted_messages + b_evicted,
        compaction_failures = case when b_user then 0 else compaction_failures end,
        event_seq = event_seq + b_events,
        budget_status = coalesce(b_budget_status, budget_status)
    from b join locked on locked_id = b_id
    where sessions.id = any($2::bigint[]) and sessions.tenant_id = any($55::bigint[])
        and sessions.id = b_id
        and sessions.xmin::text = b_row_version
        and (not b_assumed or (
            sessions.version = b_version - 1 and sessions.builds = b_builds
            and not exists (
                select 1 from c join tool_calls t on t.call_id = c.id
                where c.idx = b_idx and t.session_id = b_id
                    and t.tenant_id = any($55::bigint[]))
            and (select count(*) from a join tool_calls t on t.call_id = a.id
                 where a.idx = b_idx and t.session_id = b_id
                     and t.tenant_id = any($55::bigint[]) and t.result_seq is null)
                = b_answers))
        -- pending.sql's check, for an append that relies on a pending job.
        and (b_pending_kind is null
            or (select j.id from jobs j
                where j.session_id = b_id and j.tenant_id = any($55::bigint[])
                  and j.kind = b_pending_kind
                  and j.state in ('available', 'running', 'retryable'))
               is not distinct from b_pending_job)
    returning b_idx, {columns}, sessions.event_seq - b_events as event_base,
        sessions.xmin::text as row_version
),
inserted_messages as (
    insert into messages (session_id, seq, turn, role, content, parts, reasoning,
        tool_calls, tool_call_id, name, metadata, pinned, token_count, view_tokens,
        view_state, tenant_id)
    select s.id, m.seq, m.turn, m.role, m.content, m.parts::jsonb, m.reasoning,
        m.tool_calls::jsonb, m.tool_call_id, m.name, m.metadata::jsonb, m.pinned,
        m.token_count, m.view_tokens, m.view_state, s.tenant_id
    from unnest($26::int[], $27::bigint[], $28::bigint[], $29::smallint[], $30::text[],
        $31::text[], $32::text[], $33::text[], $34::text[], $35::text[], $36::text[],
        $37::bool[], $38::int[], $39::int[], $47::smallint[])
        as m(idx, seq, turn, role, content, parts, reasoning, tool_calls, tool_call_id,
             name, metadata, pinned, token_count, view_tokens, view_state)
    join s on s.b_idx = m.idx
),
inserted_calls as (
    insert into tool_calls (session_id, call_id, call_seq, result_seq, tenant_id)
    select s.id, c.id, c.call_seq, c.result_seq, s.tenant_id from c join s on s.b_idx = c.idx
),
answered_calls as (
    update tool_calls t set result_seq = a.seq
    from a join s on s.b_idx = a.idx
    where t.session_id = s.id and t.tenant_id = any($55::bigint[]) and t.call_id = a.id
){parts}{ledger}
select b.b_idx as item, s.id is not null as applied,
    exists (select 1 from locked where locked_id = b.b_id) as locked, s.*,
    -- What an append relying on a remembered pending job sees (store::append::Seen).
    case when b.b_pending_kind is not null then
        (select x.xmin::text from sessions x
         where x.id = b.b_id and x.tenant_id = any($55::bigint[])) end as row_version_now,
    case when b.b_pending_kind is not null then
        (select j.id from jobs j
         where j.session_id = b.b_id and j.tenant_id = any($55::bigint[])
           and j.kind = b.b_pending_kind
           and j.state in ('available', 'running', 'retryable')) end as pending_now{outputs}
from b left join s on s.b_idx = b.b_idx
