-- The sessions that read some of session $1's own rows, locked against deletion and
-- against being forked until the caller commits: a fork being made of one of them holds
-- its row lock, so this waits for it and the caller's next statement sees the new fork.
select id from sessions
where tenant_id = $2
  and id in (select session_id from session_lineage where ancestor_id = $1 and tenant_id = $2)
order by id
for key share
