with settings as (select set_config('synchronous_commit', 'off', true)),
updated as (
    update sessions set last_build_first_seq = $2, last_build_last_seq = $3,
        last_build_system_tokens = $4, last_build_tool_tokens = $7,
        last_build_history_tokens = $5, last_build_estimate_tokens = $6,
        last_build_view_epoch = $8, builds = builds + 1,
        extending_builds = extending_builds + case when $9 then 1 else 0 end
    from settings
    where id = $1 and tenant_id = $13
    returning {columns}, xmin::text as row_version
),
-- The build's point on the console's chart (its system tokens without the ledger's
-- block, which the summaries' region holds), and the oldest beyond 500 removed.
charted as (
    insert into build_history (session_id, build, system_tokens, tool_tokens,
        summary_tokens, history_tokens, estimate_tokens, window_tokens, tenant_id)
    select $1, u.builds, $4 - $10, $7, $11, $5, $6, $12, u.tenant_id from updated u
),
pruned as (
    delete from build_history
    where session_id = $1 and tenant_id = $13 and build <= (select builds from updated) - 500
)
select * from updated
