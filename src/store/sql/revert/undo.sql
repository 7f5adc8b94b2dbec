-- Undoes the compactions $2 (summaries they wrote: $3) in one statement: each message
-- whose view they changed gets the view state and tokens it had before the oldest of
-- them that touched it; the summaries they condensed (written before them) are active
-- again; the summaries they wrote leave the view (kept, marked reverted); the records
-- are marked undone by the revert's event $4. Returns the messages restored.
with prior as (
   select distinct on (p.seq) p.seq, p.state, p.tokens
   from compactions c,
        unnest(c.seqs, c.prior_states, c.prior_tokens) as p(seq, state, tokens)
   where c.session_id = $1 and c.id = any($2::bigint[])
   order by p.seq, c.id
), restored as (
   update messages m set view_state = prior.state, view_tokens = prior.tokens
   from prior
   where m.session_id = $1 and m.seq = prior.seq
   returning m.seq
), unlinked as (
   update summaries set parent_id = null
   where session_id = $1 and parent_id = any($3::bigint[]) and id <> all($3::bigint[])
), marked as (
   update summaries set reverted_at = now()
   where session_id = $1 and id = any($3::bigint[])
), undone as (
   update compactions set reverted_at = now(), reverted_by_seq = $4
   where session_id = $1 and id = any($2::bigint[])
)
select coalesce(array_agg(seq order by seq), '{}') from restored
