-- A tenant's overrides: the given columns replaced, the others kept (or all cleared
-- first when $7, --reset). No row when no tenant has the name.
insert into tenant_quotas as q
    (tenant_id, requests_per_sec, requests_burst, append_bytes_per_min, live_sessions,
     stored_bytes)
select id, $2, $3, $4, $5, $6 from tenants where name = $1
on conflict (tenant_id) do update set
    requests_per_sec = coalesce(excluded.requests_per_sec, case when $7 then null else q.requests_per_sec end),
    requests_burst = coalesce(excluded.requests_burst, case when $7 then null else q.requests_burst end),
    append_bytes_per_min = coalesce(excluded.append_bytes_per_min, case when $7 then null else q.append_bytes_per_min end),
    live_sessions = coalesce(excluded.live_sessions, case when $7 then null else q.live_sessions end),
    stored_bytes = coalesce(excluded.stored_bytes, case when $7 then null else q.stored_bytes end),
    updated_at = excluded.updated_at
returning tenant_id, requests_per_sec, requests_burst, append_bytes_per_min, live_sessions,
    stored_bytes
