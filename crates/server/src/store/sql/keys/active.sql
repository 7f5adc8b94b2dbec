-- The tenant of an active key, and the seconds it has left when it expires.
select tenant_id, extract(epoch from expires_at - now())::float8
from api_keys
where key_hash = $1 and revoked_at is null and (expires_at is null or expires_at > now())
