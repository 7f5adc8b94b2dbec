select {columns},
    (select jsonb_object_agg(j.kind, j.id) from jobs j
     where j.session_id = sessions.id and j.tenant_id = $1
       and j.state in ('available', 'running', 'retryable')) as pending_jobs
from sessions where tenant_id = $1 and external_id = $2 for update
