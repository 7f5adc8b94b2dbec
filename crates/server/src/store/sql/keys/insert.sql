-- The tenant by id ($1, read by sql/tenants/id.sql): a distributed database does not
-- plan an insert into a reference table selected from another.
insert into api_keys (tenant_id, key_hash, key_prefix, expires_at)
values ($1, $2, $3, $4)
returning id
