-- Summaries: leaf summaries cover a run of raw messages; condensed ones cover
-- consecutive summaries of the depth below (their children point to them). The active
-- summaries (parent_id null) cover exactly the log's prefix before the session's
-- view_first_seq, in order, once.
create table summaries (
    id              bigint generated always as identity primary key,
    session_id      bigint not null references sessions (id) on delete cascade,
    depth           integer not null,
    -- The raw messages covered, inclusive (through the children for a condensed one).
    first_seq       bigint not null,
    last_seq        bigint not null,
    content         text not null,
    token_count     integer not null,
    -- 1 normal, 2 aggressive, 3 truncation (the summarizer level that produced it).
    level           smallint not null,
    -- Tokens of what it replaced in the view.
    source_tokens   bigint not null,
    -- File paths, commands and identifiers of the covered span, and how many of them
    -- the summary lost.
    facts           integer not null default 0,
    facts_lost      integer not null default 0,
    parent_id       bigint references summaries (id),
    created_at      timestamptz not null default now()
);
create index summaries_active on summaries (session_id, first_seq) where parent_id is null;
create index summaries_children on summaries (parent_id) where parent_id is not null;

alter table sessions
    -- Tokens of the active summaries as counted, and how many summaries were written.
    add column summary_tokens bigint not null default 0,
    add column summaries_written bigint not null default 0;
