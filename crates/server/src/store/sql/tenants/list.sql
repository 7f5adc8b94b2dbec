select t.id, t.name, t.created_at,
    count(k.id) filter (
        where k.revoked_at is null and (k.expires_at is null or k.expires_at > now())
    )
from tenants t left join api_keys k on k.tenant_id = t.id
group by t.id
order by t.name
