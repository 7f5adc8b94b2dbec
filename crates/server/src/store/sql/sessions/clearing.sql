update sessions set view_tokens = $2, view_epoch = view_epoch + 1,
   version = version + 1, cleared_messages = cleared_messages + $3,
   updated_at = now()
where id = $1 and tenant_id = $4
