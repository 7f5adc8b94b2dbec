-- The cheap compaction layers: what each message costs in the model's view, and the
-- per-session counters of clearing, eviction and prompt-cache stability; and the
-- estimator's marginal ratio.

-- Provider tokens per counted token over the growth between consecutive anchors
-- (moving average; 0 until observed). Content added late in a session (tool output,
-- code) tokenizes differently from the system prompt, so the marginal ratio predicts the
-- next request better than the whole-prompt one.
alter table sessions add column anchor_delta_ratio double precision not null default 0;

-- Tokens the message costs as rendered in the view: token_count when full, the
-- placeholder's or the preview's count when cleared or evicted.
alter table messages add column view_tokens integer;
update messages set view_tokens = token_count;
alter table messages alter column view_tokens set not null;

alter table sessions
    -- Tool results turned into placeholders / previews so far.
    add column cleared_messages bigint not null default 0,
    add column evicted_messages bigint not null default 0,
    -- The view epoch of the last recorded build, and how many recorded builds there
    -- were and how many of them extended the previous one (same start, same view,
    -- same system prompt and tools size): a provider's prompt cache survives those.
    add column last_build_view_epoch bigint not null default 0,
    add column builds bigint not null default 0,
    add column extending_builds bigint not null default 0;
