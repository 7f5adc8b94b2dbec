-- A compaction's record, written in its transaction before its view change, with the
-- view states its messages have now (prior_states.sql's $8–$10).
insert into compactions (session_id, event_seq, compaction, view_epoch_before,
    view_first_seq_before, view_tokens_delta, summary_tokens_delta, seqs, prior_states,
    prior_tokens, summary_ids, first_seq, last_seq, tenant_id)
values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
