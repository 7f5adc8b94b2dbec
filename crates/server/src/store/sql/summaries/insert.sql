insert into summaries (session_id, depth, first_seq, last_seq, content, token_count,
   level, source_tokens, facts, facts_lost, retention, tenant_id)
values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) returning id
