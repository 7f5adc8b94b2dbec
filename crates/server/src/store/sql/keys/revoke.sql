-- Revoking a revoked key keeps the first revocation's time (least ignores a null; a
-- distributed database takes no function that is not immutable in a COALESCE of an
-- update).
update api_keys k set revoked_at = least(k.revoked_at, now())
from tenants t
where k.id = $1 and t.id = k.tenant_id
returning k.id, k.tenant_id, t.name, k.key_prefix, k.created_at, k.expires_at, k.revoked_at
