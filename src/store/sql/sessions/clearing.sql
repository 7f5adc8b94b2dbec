with cleared as (
   update messages m set view_state = 2, view_tokens = c.tokens
   from unnest($2::bigint[], $3::int[]) as c(seq, tokens)
   where m.session_id = $1 and m.seq = c.seq
)
update sessions set view_tokens = $4, view_epoch = view_epoch + 1,
   version = version + 1, cleared_messages = cleared_messages + $5,
   updated_at = now()
where id = $1
