-- Sessions whose policy sets retention_seconds, by their last change: the retention
-- sweep reads the oldest of them. Sessions without retention (the default) are not in
-- the index, so the sweep costs nothing where retention is off.
create index sessions_retained on sessions (updated_at)
    where deleted_at is null and (policy ->> 'retention_seconds')::bigint > 0;
