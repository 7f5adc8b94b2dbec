-- batch.sql repeats this update for each append of a batch: change both together.
-- The session's new aggregates and anchor, applied only if the row is as the append
-- read it ($40, its xmin). Every other part reads `s`, so nothing is written otherwise.
s as (
    update sessions set
        version = $19, message_count = $20, turn_count = $21, log_tokens = $22,
        content_bytes = $56,
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
    where id = $1 and tenant_id = $61 and xmin::text = $40{assumed}
    returning {columns}, event_seq - cardinality($41::smallint[]) as event_base,
        xmin::text as row_version
)
