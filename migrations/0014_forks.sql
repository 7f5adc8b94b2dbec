-- Forks: a session whose log is another's seqs 1..base_seq, shared by reference, and
-- which then diverges (docs/decisions/0019-session-forks.md).
alter table sessions
    -- The source's session id as it was named when this session was forked from it
    -- (null: not a fork).
    add column forked_from text,
    -- Seqs 1..base_seq are inherited: read from the ancestors in session_lineage.
    add column base_seq bigint not null default 0,
    -- Bytes of text of the inherited seqs (counted in content_bytes too).
    add column base_bytes bigint not null default 0,
    -- Deleted while a fork still reads its rows: hidden (renamed out of the id space,
    -- not found, not counted, not searched) until the last session reading it goes.
    add column deleted_at timestamptz;

-- Every session a fork reads, flattened: for each ancestor, the range of the ancestor's
-- own messages this session sees (empty when first_seq > last_seq) and the highest
-- summary id of the ancestor it inherits (the ancestor's summaries with an id up to it
-- and a last seq up to last_seq). depth 1 is the source, 2 the source's source, ...
-- No cascade on ancestor_id: an ancestor is removed only once no row here names it.
create table session_lineage (
    session_id      bigint not null references sessions (id) on delete cascade,
    ancestor_id     bigint not null references sessions (id),
    depth           integer not null,
    first_seq       bigint not null,
    last_seq        bigint not null,
    summary_limit   bigint not null,
    primary key (session_id, depth)
);
create index session_lineage_ancestor on session_lineage (ancestor_id);

-- A session's own view state of a message it inherits (the row keeps its owner's): read
-- as coalesce(overlay, row). Also where an owner's later change to a row it shares is
-- pushed down first, so the sessions reading the row keep the state they had.
create table message_views (
    session_id      bigint not null references sessions (id) on delete cascade,
    seq             bigint not null,
    view_state      smallint not null,
    view_tokens     integer not null,
    primary key (session_id, seq)
);

-- The inherited summaries a fork started with, and which of its own summaries covers
-- each since (parent_id, set when the fork condenses; null: active in the fork).
create table summary_links (
    session_id      bigint not null references sessions (id) on delete cascade,
    summary_id      bigint not null references summaries (id),
    parent_id       bigint,
    primary key (session_id, summary_id)
);

-- Where a session's messages are: (owner, first seq, last seq) per ancestor range, then
-- the session's own rows past base_seq.
create function ctxd_log_segments(p_session bigint)
returns table (owner bigint, first_seq bigint, last_seq bigint)
language sql stable parallel safe rows 4 as $$
    select l.ancestor_id, l.first_seq, l.last_seq from session_lineage l
    where l.session_id = p_session and l.first_seq <= l.last_seq
    union all
    select s.id, s.base_seq + 1, 9223372036854775807 from sessions s where s.id = p_session
$$;

-- Message::counted_bytes as stored (the same sum as migration 0010's).
create function ctxd_message_bytes(content text, parts jsonb, reasoning text,
    tool_calls jsonb, tool_call_id text, name text)
returns bigint language sql immutable parallel safe as $$
    select octet_length(content) + octet_length(reasoning)
        + octet_length(tool_call_id) + octet_length(name)
        + (select coalesce(sum(octet_length(coalesce(p ->> 'text', p ->> 'uri', ''))), 0)
           from jsonb_array_elements(coalesce(parts, '[]'::jsonb)) p)
        + (select coalesce(sum(octet_length(coalesce(c ->> 'id', ''))
                             + octet_length(coalesce(c ->> 'name', ''))
                             + octet_length(coalesce(c ->> 'arguments', ''))), 0)
           from jsonb_array_elements(coalesce(tool_calls, '[]'::jsonb)) c)
$$;
