-- Core schema: tenants, API keys, sessions, the message log, tool-call bookkeeping and
-- idempotency records. Every session-owned table is keyed by session_id first, so the
-- tables distribute by session (e.g. on Citus) without a change of model.

create table tenants (
    id          bigint generated always as identity primary key,
    name        text not null unique,
    created_at  timestamptz not null default now()
);

-- The tenant used when the server runs without API keys (loopback only).
insert into tenants (name) values ('default');

create table api_keys (
    id          bigint generated always as identity primary key,
    tenant_id   bigint not null references tenants (id) on delete cascade,
    -- SHA-256 of the whole key; the key itself is shown once and never stored.
    key_hash    bytea not null unique,
    -- The first characters of the key, to tell keys apart in listings.
    key_prefix  text not null,
    created_at  timestamptz not null default now(),
    revoked_at  timestamptz
);

create table sessions (
    id              bigint generated always as identity primary key,
    tenant_id       bigint not null references tenants (id) on delete cascade,
    external_id     text not null,
    policy          jsonb not null,
    metadata        jsonb not null default '{}',
    -- Grows with every change to the session.
    version         bigint not null default 0,
    -- Aggregates kept in step with the log so budget checks are O(1).
    message_count   bigint not null default 0,
    turn_count      bigint not null default 0,
    log_tokens      bigint not null default 0,
    view_tokens     bigint not null default 0,
    -- Tokens since (and including) the newest user message: the smallest history a
    -- request can carry.
    last_turn_tokens bigint not null default 0,
    -- First seq of the model's view (raises when compaction covers a prefix).
    view_first_seq  bigint not null default 1,
    -- Bumped whenever an earlier part of the view is rewritten (clearing, eviction,
    -- summaries): an anchor taken under another epoch no longer describes the view.
    view_epoch      bigint not null default 0,
    -- The latest BuildMessages: what it sent and what it estimated.
    last_build_first_seq        bigint not null default 0,
    last_build_last_seq         bigint not null default 0,
    last_build_system_tokens    bigint not null default 0,
    last_build_tool_tokens      bigint not null default 0,
    last_build_history_tokens   bigint not null default 0,
    last_build_estimate_tokens  bigint not null default 0,
    -- The anchor: the provider's reported input tokens for a request and ctxd's own
    -- count of that same request.
    anchor_reported_tokens  bigint not null default 0,
    anchor_fixed_tokens     bigint not null default 0,
    anchor_history_tokens   bigint not null default 0,
    anchor_first_seq        bigint not null default 0,
    anchor_last_seq         bigint not null default 0,
    anchor_view_epoch       bigint not null default 0,
    -- Running accuracy of the estimates ctxd reported, against provider usage.
    est_samples         bigint not null default 0,
    est_abs_err_sum     double precision not null default 0,
    est_max_abs_err     double precision not null default 0,
    est_last_err        double precision not null default 0,
    -- Sums of the usage clients reported, for cost accounting.
    usage_input_tokens  bigint not null default 0,
    usage_output_tokens bigint not null default 0,
    usage_cached_tokens bigint not null default 0,
    created_at      timestamptz not null default now(),
    updated_at      timestamptz not null default now(),
    unique (tenant_id, external_id)
);

create table messages (
    session_id      bigint not null references sessions (id) on delete cascade,
    -- 1, 2, 3... per session with no gaps (assigned under the session's row lock).
    seq             bigint not null,
    turn            bigint not null,
    -- 1 system, 2 user, 3 assistant, 4 tool (the proto's Role numbers).
    role            smallint not null,
    content         text not null default '',
    parts           jsonb,
    reasoning       text not null default '',
    tool_calls      jsonb,
    tool_call_id    text not null default '',
    name            text not null default '',
    metadata        jsonb not null default '{}',
    pinned          boolean not null default false,
    token_count     integer not null,
    -- 1 full, 2 cleared, 3 evicted (the proto's ViewState numbers).
    view_state      smallint not null default 1,
    created_at      timestamptz not null default now(),
    primary key (session_id, seq)
);

-- Every tool call a session has seen, and the seq of its result once answered.
create table tool_calls (
    session_id  bigint not null references sessions (id) on delete cascade,
    call_id     text not null,
    call_seq    bigint not null,
    result_seq  bigint,
    primary key (session_id, call_id)
);

-- AppendTurn idempotency: the first response for a key, replayed on retries.
create table idempotency_keys (
    session_id      bigint not null references sessions (id) on delete cascade,
    key             text not null,
    request_hash    bytea not null,
    response        jsonb not null,
    created_at      timestamptz not null default now(),
    primary key (session_id, key)
);
