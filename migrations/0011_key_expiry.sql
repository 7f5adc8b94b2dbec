-- Keys that stop working at a set time: `ctxd key create --expires-in / --expires-at`,
-- and the old key of a `ctxd key rotate` once its grace period ends. A key past its
-- expires_at is refused exactly like a revoked one.
alter table api_keys add column expires_at timestamptz;

-- `ctxd tenant list` counts each tenant's active keys; `ctxd key list --tenant` lists them.
create index api_keys_tenant on api_keys (tenant_id);
