select k.id, k.tenant_id, t.name, k.key_prefix, k.created_at, k.expires_at, k.revoked_at
from api_keys k join tenants t on t.id = k.tenant_id
