-- The task ledger: typed per-session state kept outside the compactable history.
-- Files, commands and errors are extracted from appended messages and written in the
-- append's own statement; todos and notes are set by the client (UpdateLedger). One row
-- per (session, kind, key); `id` orders entries by creation. Deleting a session deletes
-- its ledger.
create table ledger_entries (
    id          bigint generated always as identity primary key,
    session_id  bigint not null references sessions (id) on delete cascade,
    -- The proto's LedgerEntryKind numbers: 1 file, 2 command, 3 error, 4 todo, 5 note.
    kind        smallint not null,
    key         text not null,
    text        text not null,
    -- The seqs it came from, ascending: the first, then the newest (32 in all).
    seqs        bigint[] not null default '{}',
    -- A command's runs whose result showed an exit status (the newest 8): the result's
    -- seq and the status, side by side.
    run_seqs    bigint[] not null default '{}',
    run_codes   integer[] not null default '{}',
    -- A command: the newest tool call that ran it, so that its result, appended later,
    -- finds the entry.
    call_id     text,
    -- A todo: the proto's TodoStatus number (3, done, is terminal).
    status      smallint,
    updated_at  timestamptz not null default now(),
    search      tsvector generated always as (ctxd_search_vector(text)) stored,
    unique (session_id, kind, key)
);
create index ledger_entries_call on ledger_entries (session_id, call_id) where call_id is not null;
create index ledger_entries_search on ledger_entries using gin (search);

-- An entry's seqs after a merge: the first, then the newest, 32 in all.
create function ctxd_ledger_seqs(seqs bigint[])
returns bigint[] language sql immutable parallel safe as $$
    select case when cardinality(seqs) <= 32 then seqs
        else seqs[1:1] || seqs[cardinality(seqs) - 30:] end
$$;
