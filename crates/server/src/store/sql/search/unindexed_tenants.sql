-- Tenants with messages whose search vector is still to compute, at most $1, for the
-- background indexer, which then indexes theirs tenant by tenant.
select distinct tenant_id from messages where search is null limit $1
