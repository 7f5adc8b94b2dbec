select {columns},
    sessions.xmin::text as row_version,
    (select jsonb_object_agg(j.kind, j.id) from jobs j
     where j.session_id = sessions.id
       and j.state in ('available', 'running', 'retryable')) as pending_jobs,
    (select jsonb_agg(jsonb_build_array(t.call_id, t.result_seq))
     from tool_calls t
     where t.session_id = sessions.id and t.call_id = any($3)) as known_calls,
    (select jsonb_build_array(encode(k.request_hash, 'hex'), k.response)
     from idempotency_keys k
     where k.session_id = sessions.id and k.key = $4) as idempotent
from sessions where tenant_id = $1 and external_id = $2
