-- The budget of each recorded build, for the console's chart: the regions as the build's
-- report counted them, its estimate and the window. The newest 500 per session are kept
-- (the build that writes one removes what falls beyond); deleting a session deletes them.
create table build_history (
    session_id      bigint not null references sessions (id) on delete cascade,
    -- The session's build count at this build (1, 2, ...).
    build           bigint not null,
    at              timestamptz not null default now(),
    system_tokens   bigint not null,
    tool_tokens     bigint not null,
    -- The summaries with the ledger's block.
    summary_tokens  bigint not null,
    history_tokens  bigint not null,
    estimate_tokens bigint not null,
    window_tokens   bigint not null,
    primary key (session_id, build)
);
