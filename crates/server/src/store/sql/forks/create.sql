-- A fork of session $6 at seq $7, in one statement: the session row (its aggregates
-- decided by the engine), its lineage (the source's, each range cut at $7, one level
-- deeper, then the source itself with the summaries it has written so far, the newest's
-- id as the limit), the summaries it
-- reuses, the source's own view states up to $7 and the states given back ($17-$19),
-- and SESSION_FORKED ($20, $21) as the fork's first event and the source's next (the
-- source's row is locked by the caller). Nothing per shared message is copied. Of the
-- task ledger, the client's todos and notes are copied as they stand (a few rows; their
-- seqs after $7 left out); the entries taken from the shared traffic are not (a row per
-- file, command and error, each with its search index entry: copying them made a fork
-- of 2 000 messages write 1.2 MB).
with f as (
   insert into sessions (tenant_id, external_id, policy, metadata, forked_from, base_seq,
       base_bytes, message_count, turn_count, log_tokens, content_bytes, view_tokens,
       last_turn_tokens, view_first_seq, summary_tokens, event_seq, budget_status)
   values ($1, $2, $3, $4, $5, $7, $11, $7, $9, $10, $11, $12, $13, $14, $15, 1, $23)
   returning {columns}
), lineage as (
   insert into session_lineage (session_id, ancestor_id, depth, first_seq, last_seq,
       summary_limit, tenant_id)
   select f.id, l.ancestor_id, l.depth + 1, l.first_seq, least(l.last_seq, $7),
       l.summary_limit, f.tenant_id
   from f, session_lineage l where l.session_id = $6 and l.tenant_id = $1 and $7 > 0
   union all
   select f.id, $6, 1, $8 + 1, $7,
       (select coalesce(max(su.id), 0) from summaries su
        where su.session_id = $6 and su.tenant_id = $1),
       f.tenant_id
   from f where $7 > 0
), links as (
   insert into summary_links (session_id, summary_id, tenant_id)
   select f.id, x.id, f.tenant_id from f, unnest($16::bigint[]) as x(id)
), views as (
   insert into message_views (session_id, seq, view_state, view_tokens, tenant_id)
   select f.id, v.seq, v.view_state, v.view_tokens, f.tenant_id from f, message_views v
   where v.session_id = $6 and v.tenant_id = $1 and v.seq <= $7 and v.seq <> all($17::bigint[])
   union all
   select f.id, r.seq, r.state, r.tokens, f.tenant_id
   from f, unnest($17::bigint[], $18::smallint[], $19::int[]) as r(seq, state, tokens)
), ledger as (
   insert into ledger_entries (session_id, kind, key, text, seqs, status, tenant_id)
   select f.id, e.kind, e.key, e.text,
      array(select x from unnest(e.seqs) x where x <= $7 order by x), e.status, f.tenant_id
   from f, ledger_entries e
   where e.session_id = $6 and e.tenant_id = $1 and e.kind in (4, 5)
   order by e.id
), src as (
   update sessions set event_seq = event_seq + 1 where id = $6 and tenant_id = $1
   returning tenant_id, external_id, event_seq, version
), ins as (
   insert into events (tenant_id, session_id, external_id, session_seq, kind,
       session_version, detail)
   select f.tenant_id, f.id, f.external_id, 1, $20, f.version, $21 from f
   union all
   select src.tenant_id, $6, src.external_id, src.event_seq, $20, src.version, $21
   from src, f
   returning id
)
select f.*, pg_notify($22, (select max(id) from ins)::text)::text as notified from f
