insert into proxy_heads (tenant_id, key, session_id, message_count, digest, session_version)
values ($1, $2, $3, $4, $5, $6)
on conflict (tenant_id, key) do update
set session_id = excluded.session_id,
    message_count = excluded.message_count,
    digest = excluded.digest,
    session_version = excluded.session_version,
    updated_at = excluded.updated_at
-- A replica that finishes late never moves a conversation back within its session.
where proxy_heads.session_id <> excluded.session_id
   or proxy_heads.session_version <= excluded.session_version
