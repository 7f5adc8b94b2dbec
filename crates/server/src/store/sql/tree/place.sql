-- A session's place in its tree: its link ([parent name or null, tool call, depth]),
-- its children's count, and sums over it and every descendant that exists (saturating
-- at the largest bigint).
with subtree as (
    select s.log_tokens, s.usage_input_tokens, s.usage_output_tokens,
        s.usage_cached_tokens
    from sessions s
    where s.tenant_id = $2
      and (s.id = $1 or s.id in (
          select l.session_id from session_links l
          where l.tenant_id = $2 and l.ancestors @> array[$1::bigint]))
)
select
    (select jsonb_build_array(p.external_id, l.parent_tool_call_id,
                cardinality(l.ancestors))
     from session_links l left join sessions p on p.id = l.parent_id and p.tenant_id = $2
     where l.session_id = $1 and l.tenant_id = $2) as link,
    (select count(*) from session_links l
     join sessions c on c.id = l.session_id and c.tenant_id = $2
     where l.parent_id = $1 and l.tenant_id = $2) as children_total,
    (select count(*) from subtree) as sessions,
    (select least(coalesce(sum(log_tokens), 0), 9223372036854775807)::bigint
     from subtree) as log_tokens,
    (select least(coalesce(sum(usage_input_tokens), 0), 9223372036854775807)::bigint
     from subtree) as input_tokens,
    (select least(coalesce(sum(usage_output_tokens), 0), 9223372036854775807)::bigint
     from subtree) as output_tokens,
    (select least(coalesce(sum(usage_cached_tokens), 0), 9223372036854775807)::bigint
     from subtree) as cached_input_tokens
