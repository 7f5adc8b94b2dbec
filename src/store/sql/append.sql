-- One AppendTurn's writes in one statement (the session row is already locked):
-- the messages, the new tool calls (answered ones carry their result seq, since a
-- sub-statement cannot see rows another one inserts), the answers to earlier calls,
-- and the session's new aggregates and anchor.
with inserted_messages as (
    insert into messages (session_id, seq, turn, role, content, parts, reasoning,
        tool_calls, tool_call_id, name, metadata, pinned, token_count, view_tokens,
        view_state)
    select $1, m.seq, m.turn, m.role, m.content, m.parts::jsonb, m.reasoning,
        m.tool_calls::jsonb, m.tool_call_id, m.name, m.metadata::jsonb, m.pinned,
        m.token_count, m.view_tokens, m.view_state
    from unnest($2::bigint[], $3::bigint[], $4::smallint[], $5::text[], $6::text[],
        $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::bool[],
        $13::int[], $36::int[], $37::smallint[])
        as m(seq, turn, role, content, parts, reasoning, tool_calls, tool_call_id,
             name, metadata, pinned, token_count, view_tokens, view_state)
),
inserted_calls as (
    insert into tool_calls (session_id, call_id, call_seq, result_seq)
    select $1, c.id, c.call_seq, c.result_seq
    from unnest($14::text[], $15::bigint[], $16::bigint[]) as c(id, call_seq, result_seq)
),
answered_calls as (
    update tool_calls t set result_seq = a.seq
    from unnest($17::text[], $18::bigint[]) as a(id, seq)
    where t.session_id = $1 and t.call_id = a.id
)
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
    compaction_failures = case when $39 then 0 else compaction_failures end
where id = $1
