-- Gives back to session $1, whose seqs up to $3 are inherited, the view state and
-- tokens each message had before the oldest of the compactions $2 that touched it, the
-- way every view state is written (store/overlay.rs, decision 0019): an inherited
-- seq's state goes to the session's overlay; one of its own rows is rewritten only
-- after its current state is copied to the overlay of every session in $4 (the
-- dependants, locked by the caller) that reads the row and has no state of its own for
-- it yet, so no fork's view changes. Returns the seqs restored, in order. $5: the
-- session's tenant.
with c as (
   select distinct on (p.seq) p.seq, p.state, p.tokens
   from compactions k,
        unnest(k.seqs, k.prior_states, k.prior_tokens) as p(seq, state, tokens)
   where k.session_id = $1 and k.tenant_id = $5 and k.id = any($2::bigint[])
   order by p.seq, k.id
),
kept as (
   insert into message_views (session_id, seq, view_state, view_tokens, tenant_id)
   select l.session_id, m.seq, m.view_state, m.view_tokens, $5
   from session_lineage l
   join c on c.seq between l.first_seq and l.last_seq
   join messages m on m.session_id = $1 and m.tenant_id = $5 and m.seq = c.seq
   where l.ancestor_id = $1 and l.tenant_id = $5 and l.session_id = any($4::bigint[])
   on conflict (session_id, seq, tenant_id) do nothing
),
own as (
   update messages m set view_state = c.state, view_tokens = c.tokens
   from c where m.session_id = $1 and m.tenant_id = $5 and m.seq = c.seq and c.seq > $3
   returning m.seq
),
inherited as (
   insert into message_views (session_id, seq, view_state, view_tokens, tenant_id)
   select $1, c.seq, c.state, c.tokens, $5 from c where c.seq <= $3
   on conflict (session_id, seq, tenant_id) do update
       set view_state = excluded.view_state, view_tokens = excluded.view_tokens
   returning seq
)
select coalesce(array_agg(seq order by seq), '{}')
from (select seq from own union all select seq from inherited) r
