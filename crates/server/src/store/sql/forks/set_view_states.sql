-- Sets view state $2 of seqs $3 (with their view tokens $4) for session $1, whose seqs up
-- to $5 are inherited. An inherited seq's state goes to the session's overlay. One of its
-- own rows is rewritten only after its current state is copied to the overlay of every
-- session in $6 (the dependants, locked by the caller) that reads the row and has no
-- state of its own for it yet, so what they see does not change. $7: the tenant.
with c as (select * from unnest($3::bigint[], $4::int[]) as c(seq, tokens)),
kept as (
   insert into message_views (session_id, seq, view_state, view_tokens, tenant_id)
   select l.session_id, m.seq, m.view_state, m.view_tokens, $7
   from session_lineage l
   join c on c.seq between l.first_seq and l.last_seq
   join messages m on m.session_id = $1 and m.tenant_id = $7 and m.seq = c.seq
   where l.ancestor_id = $1 and l.tenant_id = $7 and l.session_id = any($6::bigint[])
   on conflict (session_id, seq, tenant_id) do nothing
),
own as (
   update messages m set view_state = $2, view_tokens = c.tokens
   from c where m.session_id = $1 and m.tenant_id = $7 and m.seq = c.seq and c.seq > $5
),
inherited as (
   insert into message_views (session_id, seq, view_state, view_tokens, tenant_id)
   select $1, c.seq, $2, c.tokens, $7 from c where c.seq <= $5
   on conflict (session_id, seq, tenant_id) do update
       set view_state = excluded.view_state, view_tokens = excluded.view_tokens
)
select 1
