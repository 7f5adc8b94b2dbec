-- Undoing compactions (RevertCompaction). Every compaction records what it changed in
-- the session's view, in the transaction that changes it, so that it and every later
-- one can be put back exactly: the messages' view state and view tokens before, the
-- summaries it wrote, the view's first seq and epoch before, and what it changed in the
-- session's aggregates. The log itself is never changed by either.
create table compactions (
    id                      bigint generated always as identity primary key,
    session_id              bigint not null references sessions (id) on delete cascade,
    -- The session_seq of its event (TOOL_RESULTS_CLEARED or COMPACTION_COMPLETED): the
    -- cursor a session's event stream delivered it with.
    event_seq               bigint not null,
    -- 0: a clearing; else a summarization pass of this CompactionKind (1 summarize,
    -- 2 fallback, 3 emergency).
    compaction              smallint not null,
    -- The session's view epoch and view_first_seq just before it.
    view_epoch_before       bigint not null,
    view_first_seq_before   bigint not null,
    -- What it changed in sessions.view_tokens and sessions.summary_tokens (after minus
    -- before).
    view_tokens_delta       bigint not null,
    summary_tokens_delta    bigint not null,
    -- The messages whose view it changed (tool results cleared; older steps a step
    -- summary took out of the view), with their view_state and view_tokens before.
    seqs                    bigint[] not null,
    prior_states            smallint[] not null,
    prior_tokens            integer[] not null,
    -- The summaries it wrote (leaf and condensed).
    summary_ids             bigint[] not null,
    -- A summarization pass's covered messages, inclusive (0 and 0 for a clearing).
    first_seq               bigint not null default 0,
    last_seq                bigint not null default 0,
    created_at              timestamptz not null default now(),
    -- When it was undone, and the session_seq of the COMPACTION_REVERTED event that
    -- undid it.
    reverted_at             timestamptz,
    reverted_by_seq         bigint,
    unique (session_id, event_seq)
);

-- Summaries a revert took out of the view: kept (Expand, Search still read them), never
-- active again.
alter table summaries add column reverted_at timestamptz;
create index summaries_reverted on summaries (session_id, reverted_at)
    where reverted_at is not null;

-- After a revert automatic compaction waits until the session's log_tokens reach this
-- (0: no wait); a manual Compact lifts it.
alter table sessions add column compaction_resume_log_tokens bigint not null default 0;
