-- Records what a build sent (store::sessions::record_build), as
-- sql/sessions/record_build.sql did in one statement whose common table expression
-- inserted the build's point on the console's chart (a distributed database plans that
-- in parts: migration 0024, docs/decisions/0028-citus-distribution.md). Plain
-- statements on the tenant: the session's row updated (returned whole, with its xmin,
-- for the replica's row cache), the chart's point inserted and the oldest beyond 500
-- removed. Losing the record in a crash only costs one anchor, so it commits without
-- waiting for the WAL flush. Nothing when there is no such session.
create function ctxd_record_build(
    p_session bigint, p_tenant bigint, p_first_seq bigint, p_last_seq bigint,
    p_system_tokens bigint, p_history_tokens bigint, p_estimate_tokens bigint,
    p_tool_tokens bigint, p_view_epoch bigint, p_extends boolean,
    p_ledger_tokens bigint, p_summary_tokens bigint, p_window_tokens bigint)
returns table (session sessions, row_version text)
language plpgsql as $$
declare
    build_count bigint;
begin
    perform set_config('synchronous_commit', 'off', true);
    return query
        with updated as (
            update sessions set last_build_first_seq = p_first_seq,
                last_build_last_seq = p_last_seq,
                last_build_system_tokens = p_system_tokens,
                last_build_tool_tokens = p_tool_tokens,
                last_build_history_tokens = p_history_tokens,
                last_build_estimate_tokens = p_estimate_tokens,
                last_build_view_epoch = p_view_epoch, builds = builds + 1,
                extending_builds = extending_builds + case when p_extends then 1 else 0 end
            where id = p_session and tenant_id = p_tenant
            returning sessions, xmin::text
        )
        select * from updated;
    if not found then
        return;
    end if;
    select builds into build_count from sessions
    where id = p_session and tenant_id = p_tenant;
    -- The build's point on the console's chart (its system tokens without the ledger's
    -- block, which the summaries' region holds).
    insert into build_history (session_id, build, system_tokens, tool_tokens,
        summary_tokens, history_tokens, estimate_tokens, window_tokens, tenant_id)
    values (p_session, build_count, p_system_tokens - p_ledger_tokens, p_tool_tokens,
        p_summary_tokens, p_history_tokens, p_estimate_tokens, p_window_tokens, p_tenant);
    delete from build_history
    where session_id = p_session and tenant_id = p_tenant and build <= build_count - 500;
end $$;
