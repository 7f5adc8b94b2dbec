-- A tenant's own quotas, set with `ctxd tenant quota NAME …`; a null column keeps the
-- server's default (--quota-…). 0 turns a quota off for the tenant. Servers read a
-- tenant's row at most every 5 s.
create table tenant_quotas (
    tenant_id            bigint primary key references tenants (id) on delete cascade,
    requests_per_sec     double precision check (requests_per_sec >= 0),
    requests_burst       bigint check (requests_burst >= 0),
    append_bytes_per_min bigint check (append_bytes_per_min >= 0),
    live_sessions        bigint check (live_sessions >= 0),
    stored_bytes         bigint check (stored_bytes >= 0),
    updated_at           timestamptz not null default now()
);
