-- The session after a revert: the aggregates as before the oldest compaction undone,
-- a new view epoch and version, the epochs of a request made on the restored view
-- carried over, and the wait of automatic compaction.
update sessions set view_first_seq = $2, view_tokens = $3, summary_tokens = $4,
   cleared_messages = $5, summaries_written = $6, view_epoch = $7,
   anchor_view_epoch = coalesce($8, anchor_view_epoch), last_build_view_epoch = $9,
   compaction_resume_log_tokens = $10, version = version + 1, updated_at = now()
where id = $1 and tenant_id = $11
