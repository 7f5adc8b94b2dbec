insert into api_keys (tenant_id, key_hash, key_prefix, expires_at)
select t.id, $2, $3, $4 from tenants t where t.name = $1
returning id
