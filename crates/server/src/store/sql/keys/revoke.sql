-- Revoking a revoked key keeps the first revocation's time.
with revoked as (
    update api_keys set revoked_at = coalesce(revoked_at, now())
    where id = $1
    returning id, tenant_id, key_prefix, created_at, expires_at, revoked_at
)
select r.id, t.name, r.key_prefix, r.created_at, r.expires_at, r.revoked_at
from revoked r join tenants t on t.id = r.tenant_id
