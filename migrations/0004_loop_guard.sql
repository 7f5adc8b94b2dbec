-- Loop guard: consecutive builds in which automatic compaction was due but could not
-- reduce the request at all. At the policy's compaction_failure_limit automatic
-- compaction pauses, until a manual Compact or a new user turn resets the count.
alter table sessions add column compaction_failures integer not null default 0;
