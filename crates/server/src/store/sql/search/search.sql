-- Hits in the sessions in scope (one of the tenant's, $3, or all its live ones; with
-- $11, only that session's tree): each session's own messages, summaries and ledger
-- entries, and for a fork those messages and summaries it inherits — an ancestor's rows
-- within the range the fork reads of it, with the fork's view state, and the ancestor's
-- summaries written before the fork within that range. A shared message is a hit of
-- every session in scope whose history holds it.
with q as (select websearch_to_tsquery('english', ctxd_search_text($2)) as q),
hits as (
   (select m.session_id, m.session_id as owner, m.seq, 0::bigint as summary_id, 0 as depth,
           m.role,
           case when m.seq < s.view_first_seq then 4::smallint else m.view_state end
               as view_state,
           0::bigint as first_seq, 0::bigint as last_seq,
           0::bigint as ledger_id, 0::smallint as ledger_kind, ''::text as ledger_key,
           ts_rank_cd(m.search, q.q) as rank, m.created_at
    from q, messages m join sessions s on s.id = m.session_id and s.tenant_id = $1
    where $7 and m.tenant_id = $1 and s.deleted_at is null
      and ($3::bigint is null or m.session_id = $3)
      and ($11::bigint is null or m.session_id = $11 or m.session_id in (
          select k.session_id from session_links k
          where k.tenant_id = $1 and k.ancestors @> array[$11::bigint]))
      and m.search @@ q.q
      and (cardinality($4::smallint[]) = 0 or m.role = any($4))
      and ($5::timestamptz is null or m.created_at >= $5)
      and ($6::timestamptz is null or m.created_at < $6)
    order by rank desc limit $9)
   union all
   (select l.session_id, m.session_id, m.seq, 0::bigint, 0, m.role,
           case when m.seq < s.view_first_seq then 4::smallint
               else coalesce(v.view_state, m.view_state) end,
           0::bigint, 0::bigint, 0::bigint, 0::smallint, ''::text,
           ts_rank_cd(m.search, q.q) as rank, m.created_at
    from q, session_lineage l
    join sessions s on s.id = l.session_id and s.tenant_id = $1
    join messages m on m.session_id = l.ancestor_id and m.tenant_id = $1
       and m.seq between l.first_seq and l.last_seq
    left join message_views v
       on v.session_id = l.session_id and v.tenant_id = $1 and v.seq = m.seq
    where $7 and l.tenant_id = $1 and s.deleted_at is null
      and ($3::bigint is null or l.session_id = $3)
      and ($11::bigint is null or l.session_id = $11 or l.session_id in (
          select k.session_id from session_links k
          where k.tenant_id = $1 and k.ancestors @> array[$11::bigint]))
      and m.search @@ q.q
      and (cardinality($4::smallint[]) = 0 or m.role = any($4))
      and ($5::timestamptz is null or m.created_at >= $5)
      and ($6::timestamptz is null or m.created_at < $6)
    order by rank desc limit $9)
   union all
   (select su.session_id, su.session_id, 0::bigint, su.id, su.depth, 0::smallint,
           0::smallint, su.first_seq, su.last_seq, 0::bigint, 0::smallint, ''::text,
           ts_rank_cd(su.search, q.q) as rank, su.created_at
    from q, summaries su join sessions s on s.id = su.session_id and s.tenant_id = $1
    where $8 and su.tenant_id = $1 and s.deleted_at is null
      and ($3::bigint is null or su.session_id = $3)
      and ($11::bigint is null or su.session_id = $11 or su.session_id in (
          select k.session_id from session_links k
          where k.tenant_id = $1 and k.ancestors @> array[$11::bigint]))
      and su.search @@ q.q
      and ($5::timestamptz is null or su.created_at >= $5)
      and ($6::timestamptz is null or su.created_at < $6)
    order by rank desc limit $9)
   union all
   (select l.session_id, su.session_id, 0::bigint, su.id, su.depth, 0::smallint,
           0::smallint, su.first_seq, su.last_seq, 0::bigint, 0::smallint, ''::text,
           ts_rank_cd(su.search, q.q) as rank, su.created_at
    from q, session_lineage l
    join sessions s on s.id = l.session_id and s.tenant_id = $1
    join summaries su on su.session_id = l.ancestor_id and su.tenant_id = $1
       and su.id <= l.summary_limit and su.last_seq <= l.last_seq
    where $8 and l.tenant_id = $1 and s.deleted_at is null
      and ($3::bigint is null or l.session_id = $3)
      and ($11::bigint is null or l.session_id = $11 or l.session_id in (
          select k.session_id from session_links k
          where k.tenant_id = $1 and k.ancestors @> array[$11::bigint]))
      and su.search @@ q.q
      and ($5::timestamptz is null or su.created_at >= $5)
      and ($6::timestamptz is null or su.created_at < $6)
    order by rank desc limit $9)
   union all
   (select l.session_id, l.session_id, 0::bigint, 0::bigint, 0, 0::smallint, 0::smallint,
           coalesce(l.seqs[1], 0), coalesce(l.seqs[cardinality(l.seqs)], 0),
           l.id, l.kind, l.key, ts_rank_cd(l.search, q.q) as rank, l.updated_at
    from q, ledger_entries l join sessions s on s.id = l.session_id and s.tenant_id = $1
    where $10 and l.tenant_id = $1 and s.deleted_at is null
      and ($3::bigint is null or l.session_id = $3)
      and ($11::bigint is null or l.session_id = $11 or l.session_id in (
          select k.session_id from session_links k
          where k.tenant_id = $1 and k.ancestors @> array[$11::bigint]))
      and l.search @@ q.q
      and ($5::timestamptz is null or l.updated_at >= $5)
      and ($6::timestamptz is null or l.updated_at < $6)
    order by rank desc limit $9)
), top as (
   select * from hits order by rank desc, created_at desc limit $9
)
select s.external_id, top.seq, top.summary_id, top.depth, top.role, top.view_state,
       top.first_seq, top.last_seq, top.ledger_kind, top.ledger_key, top.rank,
       top.created_at,
       case when top.summary_id > 0 then
           (select su.source_tokens from summaries su
            where su.id = top.summary_id and su.tenant_id = $1)
       else 0 end::bigint as source_tokens,
       ts_headline('english', ctxd_search_text(
           left(case when top.seq > 0 then
               (select ctxd_message_doc(m.content, m.parts, m.reasoning, m.tool_calls, m.name)
                from messages m
                where m.session_id = top.owner and m.tenant_id = $1 and m.seq = top.seq)
           when top.ledger_id > 0 then
               (select l.text from ledger_entries l where l.id = top.ledger_id and l.tenant_id = $1)
           else (select su.content from summaries su
                 where su.id = top.summary_id and su.tenant_id = $1) end, 100000)),
           (select q from q),
           'StartSel=«, StopSel=», MaxWords=30, MinWords=10, MaxFragments=2, FragmentDelimiter=" … "')
           as snippet
from top join sessions s on s.id = top.session_id and s.tenant_id = $1
order by top.rank desc, top.created_at desc
