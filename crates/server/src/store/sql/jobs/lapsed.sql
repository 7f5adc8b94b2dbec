select j.id, j.tenant_id, s.external_id
from jobs j join sessions s on s.id = j.session_id and s.tenant_id = j.tenant_id
where j.state = 'running' and j.lease_until < now()
