-- Events (a transactional outbox) and full-text search of the archive.
--
-- An event is inserted in the transaction of the change it describes, under the
-- session's row lock, and announced with pg_notify (its id only). Two orders read it:
--   * one session's stream follows session_seq (1, 2, 3... taken under the lock, so a
--     visible seq n means every seq below n has committed: no gap, no horizon needed);
--   * a tenant's stream (and each replica's fan-out) follows (tx, id), where tx is the
--     writing transaction's id, reading only rows with tx below the oldest transaction
--     still running (pg_snapshot_xmin): a row that commits later always sorts after
--     everything already read, so a cursor never skips it.
alter table sessions
    add column event_seq bigint not null default 0,
    -- The budget status (the proto's BudgetStatus numbers) the latest event saw, so a
    -- crossing is announced once.
    add column budget_status smallint not null default 1;

create table events (
    id              bigint generated always as identity primary key,
    tenant_id       bigint not null,
    -- sessions.id, without a foreign key: a session's events outlive it (deletion is
    -- itself an event).
    session_id      bigint not null,
    external_id     text not null,
    session_seq     bigint not null,
    tx              bigint not null default (pg_current_xact_id()::text::bigint),
    -- The proto's EventKind numbers.
    kind            smallint not null,
    session_version bigint not null,
    detail          jsonb not null,
    created_at      timestamptz not null default now(),
    unique (session_id, session_seq)
);
create index events_position on events (tx, id);
create index events_tenant_position on events (tenant_id, tx, id);
create index events_created on events (created_at);

-- Per tenant, the newest position pruning removed: a tenant stream resuming from an
-- older cursor may have lost events (OUT_OF_RANGE).
create table events_pruned (
    tenant_id   bigint primary key,
    tx          bigint not null,
    id          bigint not null
);

-- What a message offers to search: content, text parts, reasoning, tool calls (names
-- and arguments) and name. Plain expressions (no subqueries), so PostgreSQL inlines it.
create function ctxd_message_doc(content text, parts jsonb, reasoning text, tool_calls jsonb, name text)
returns text language sql immutable parallel safe as $$
    select concat_ws(' ', content,
        replace(jsonb_path_query_array(parts, '$[*].text')::text, '\n', ' '),
        reasoning,
        replace(jsonb_path_query_array(tool_calls, '$[*].name')::text, '\n', ' '),
        replace(jsonb_path_query_array(tool_calls, '$[*].arguments')::text, '\n', ' '),
        name)
$$;

-- Text as searched: path separators and dots become spaces, so that the parts of
-- `src/engine.rs` or `config.toml` are words of their own (the parser would otherwise
-- keep a whole path as one token). Queries go through the same function.
create function ctxd_search_text(doc text)
returns text language sql immutable parallel safe as $$
    select translate(doc, '/\.', '   ')
$$;

-- What is indexed of a document: all of it up to 50 000 characters, else the first
-- 40 000 and the last 10 000 (where a long tool output's errors usually are). Bounded
-- so that a tsvector stays well under PostgreSQL's 1 MB cap whatever the text.
create function ctxd_search_excerpt(doc text)
returns text language sql immutable parallel safe as $$
    select case when length(doc) <= 50000 then doc
        else left(doc, 40000) || ' ' || right(doc, 10000) end
$$;

create function ctxd_search_vector(doc text)
returns tsvector language sql immutable parallel safe as $$
    select to_tsvector('english'::regconfig, ctxd_search_text(ctxd_search_excerpt(doc)))
$$;

-- A message's vector is not computed by the append (to_tsvector costs about as much as
-- the rest of an append): each replica's indexer fills it in batches shortly after, and
-- Search first indexes whatever in its scope is still pending, so it never misses one.
alter table messages add column search tsvector;
create index messages_unindexed on messages (session_id, seq) where search is null;
alter table summaries add column search tsvector generated always as
    (ctxd_search_vector(content)) stored;
-- Partial: an append (search still null) does not touch the GIN index, whose pending
-- list serializes concurrent inserters.
create index messages_search on messages using gin (search) where search is not null;
create index summaries_search on summaries using gin (search);
