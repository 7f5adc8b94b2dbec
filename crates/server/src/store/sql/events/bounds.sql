select (select min(session_seq) from events where session_id = $1 and tenant_id = $2),
    event_seq
from sessions where id = $1 and tenant_id = $2
