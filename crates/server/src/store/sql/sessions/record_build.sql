with settings as (select set_config('synchronous_commit', 'off', true))
update sessions set last_build_first_seq = $2, last_build_last_seq = $3,
    last_build_system_tokens = $4, last_build_tool_tokens = $7,
    last_build_history_tokens = $5, last_build_estimate_tokens = $6,
    last_build_view_epoch = $8, builds = builds + 1,
    extending_builds = extending_builds + case when $9 then 1 else 0 end
from settings
where id = $1
returning {columns}, xmin::text as row_version
