select {columns},
    sessions.xmin::text as row_version,
    (select jsonb_object_agg(j.kind, j.id) from jobs j
     where j.session_id = sessions.id and j.tenant_id = $1
       and j.state in ('available', 'running', 'retryable')) as pending_jobs,
    case when sessions.base_seq = 0 then
        (select jsonb_agg(jsonb_build_array(t.call_id, t.result_seq))
         from tool_calls t
         where t.session_id = sessions.id and t.tenant_id = $1 and t.call_id = any($3))
    else
        -- A fork: its own calls and answers first, then its ancestors' calls made within
        -- the range it inherits of each, answered only if the answer is within it too.
        (select jsonb_agg(jsonb_build_array(k.call_id, k.result_seq)) from (
            select distinct on (c.call_id) c.call_id, c.result_seq from (
                select t.call_id, t.result_seq, 0 as depth from tool_calls t
                where t.session_id = sessions.id and t.tenant_id = $1
                  and t.call_id = any($3)
                union all
                select t.call_id, case when t.result_seq <= l.last_seq then t.result_seq end,
                    l.depth
                from session_lineage l
                join tool_calls t on t.session_id = l.ancestor_id and t.tenant_id = $1
                    and t.call_id = any($3)
                where l.session_id = sessions.id and l.tenant_id = $1
                  and t.call_seq <= l.last_seq
            ) c order by c.call_id, c.depth) k)
    end as known_calls,
    (select jsonb_build_array(encode(k.request_hash, 'hex'), k.response)
     from idempotency_keys k
     where k.session_id = sessions.id and k.tenant_id = $1 and k.key = $4) as idempotent
from sessions where tenant_id = $1 and external_id = $2
