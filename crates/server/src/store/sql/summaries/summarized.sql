update sessions set view_first_seq = $2, view_tokens = $3, summary_tokens = $4,
   summaries_written = summaries_written + $5, view_epoch = view_epoch + 1,
   version = version + 1, updated_at = now()
where id = $1 and tenant_id = $6
