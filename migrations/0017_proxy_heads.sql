-- The provider endpoint's sessions: which session a client's conversation continues in
-- (a fork, once the client rewrote its history), and a digest of the history the
-- session holds as the client sent it, so a request that extends it is recognised
-- without reading the session back.
create table proxy_heads (
    tenant_id    bigint not null references tenants (id) on delete cascade,
    -- The x-ctxd-session header, or a digest of (format, system prompt, first message).
    key          text not null,
    -- sessions.external_id of the session the conversation continues in.
    session_id   text not null,
    -- Messages of the client's history the session holds, and their chained
    -- fingerprints (ctxd_core::exchange::chain).
    message_count bigint not null check (message_count >= 0),
    digest       bytea not null,
    -- The session's version after the endpoint's last append to it: an append that
    -- trusts this head expects it, so a head another writer overtook is never trusted.
    session_version bigint not null,
    updated_at   timestamptz not null default now(),
    primary key (tenant_id, key)
);
