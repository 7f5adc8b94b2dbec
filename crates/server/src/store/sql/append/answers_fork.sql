-- Answers to calls of earlier appends, in a fork: a call it inherited has no row of the
-- fork's own yet, so the answer inserts one (the ancestor's row stays the ancestor's).
answered_calls as (
    insert into tool_calls (session_id, call_id, call_seq, result_seq, tenant_id)
    select $1, a.id,
        coalesce(
            (select t.call_seq from tool_calls t
             where t.session_id = $1 and t.tenant_id = $61 and t.call_id = a.id),
            (select t.call_seq from session_lineage l
             join tool_calls t on t.session_id = l.ancestor_id and t.tenant_id = $61
                 and t.call_id = a.id
             where l.session_id = $1 and l.tenant_id = $61 and t.call_seq <= l.last_seq
             order by l.depth limit 1)),
        a.seq, s.tenant_id
    from s, unnest($17::text[], $18::bigint[]) as a(id, seq)
    on conflict (session_id, call_id, tenant_id) do update set result_seq = excluded.result_seq
)
