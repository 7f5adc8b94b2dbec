select tenant_id, requests_per_sec, requests_burst, append_bytes_per_min, live_sessions,
    stored_bytes
from tenant_quotas where tenant_id = $1
